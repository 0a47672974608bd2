/* Generated from schemas/agent_config.v3.json by json-schema-to-typescript: do not edit; run `tether schema export schemas`, then `npm run generate` here. */

/**
 * An agent's configuration, `agent_config.v3`: `agent_config.v2` (seed 004) plus how the agent acts and
 * where its models run. Every `agent_config.v2` object is a valid v3 one.
 */
export interface AgentConfigV3 {
  baseUrl?: string | null;
  description?: string | null;
  dialect?: string | null;
  limits?: AgentLimitsConfig;
  mode?: "talk_first" | "act_first" | "actionable_intent";
  model: string;
  name: string;
  policy?: {
    [k: string]: unknown;
  };
  responder?: string | AgentModelConfig | null;
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
 * A model and, optionally, the server it runs on (`agent_config.v3`'s `responder` in its long form).
 */
export interface AgentModelConfig {
  baseUrl?: string | null;
  model: string;
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
