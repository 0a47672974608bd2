/* Generated from schemas/tool_call.v1.json by json-schema-to-typescript: do not edit; run `tether schema export schemas`, then `npm run generate` here. */

/**
 * A request by the model to run one tool.
 */
export interface ToolCall {
  annotations?: string[];
  arguments?: {
    [k: string]: unknown;
  };
  id: string;
  name: string;
  priority?: number | null;
  provenance?: Provenance | null;
  why?: string | null;
}
/**
 * Where a call came from in the model's output.
 */
export interface Provenance {
  dialect: string;
  repairs?: Repair[];
  span?: [number, number] | null;
}
/**
 * One change tether made to what the model wrote, so that policy can judge the call.
 */
export interface Repair {
  kind: string;
  message: string;
  path?: string | null;
}
