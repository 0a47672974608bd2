/* Generated from schemas/agent_config.v2.json by json-schema-to-typescript: do not edit; run `tether schema export schemas`, then `npm run generate` here. */

/**
 * An agent's configuration (seed 004's `agent_config.v2`): model, instructions, tools and limits.
 */
export interface AgentConfig {
  description?: string | null;
  dialect?: string | null;
  limits?: AgentLimitsConfig;
  model: string;
  name: string;
  systemPrompt?: string;
  termination?: "no_calls" | "end_turn" | "final_response";
  tools?: AgentToolConfig[];
}
/**
 * The run's limits (see `tether.loop.Limits`); a missing one keeps its default.
 */
export interface AgentLimitsConfig {
  maxIterations?: number | null;
  maxTokens?: number | null;
  maxToolCalls?: number | null;
  maxWallTimeS?: number | null;
  retryBudget?: number | null;
}
/**
 * One tool an agent offers: its type (what implements it), its instance name and its settings.
 */
export interface AgentToolConfig {
  config?: {
    [k: string]: unknown;
  };
  description?: string | null;
  toolName: string;
  toolType: string;
}
