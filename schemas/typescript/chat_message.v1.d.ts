/* Generated from schemas/chat_message.v1.json by json-schema-to-typescript: do not edit; run `tether schema export schemas`, then `npm run generate` here. */

export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage;

export interface SystemMessage {
  content: string;
  kind?: "system";
}
export interface UserMessage {
  content: string;
  kind?: "user";
}
export interface AssistantMessage {
  content?: string;
  kind?: "assistant";
  raw?: string | null;
  reasoning?: string | null;
  tool_calls?: ToolCall[];
}
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
export interface ToolResultMessage {
  call_id: string;
  envelope: OkEnvelope | NeedsEnvelope | ErrorEnvelope;
  kind?: "tool_result";
  name: string;
}
export interface OkEnvelope {
  data?: unknown;
  ok?: true;
}
/**
 * Information the model should ask the user for before calling again (seed 002).
 */
export interface NeedsEnvelope {
  needs: {
    [k: string]: boolean | string;
  };
  ok?: false;
}
export interface ErrorEnvelope {
  error: ErrorInfo;
  ok?: false;
}
export interface ErrorInfo {
  code: string;
  details?: {
    [k: string]: unknown;
  } | null;
  message: string;
  recoverable: boolean;
  suggestion?: string | null;
}
