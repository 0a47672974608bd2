/* Generated from schemas/meowstik_tool_calls.v1.json by json-schema-to-typescript: do not edit; run `tether schema export schemas`, then `npm run generate` here. */

/**
 * Meowstik's whole model output: `{"toolCalls": [...]}` (seed 000).
 */
export interface MeowstikToolCalls {
  toolCalls: MeowstikToolCall[];
}
/**
 * One call in Meowstik's output format (seed 000).
 */
export interface MeowstikToolCall {
  id: string;
  operation: string;
  parameters: {
    [k: string]: unknown;
  };
  priority?: number;
  type: string;
}
