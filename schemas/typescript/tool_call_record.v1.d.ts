/* Generated from schemas/tool_call_record.v1.json by json-schema-to-typescript: do not edit; run `tether schema export schemas`, then `npm run generate` here. */

/**
 * Kalygo's typed record of a completed tool call (seed 004).
 */
export interface ToolCallRecord {
  input: {
    [k: string]: unknown;
  };
  output?: unknown;
  toolName: string;
  toolType: string;
}
