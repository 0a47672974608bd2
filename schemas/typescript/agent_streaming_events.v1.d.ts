/* Generated from schemas/agent_streaming_events.v1.json by json-schema-to-typescript: do not edit; run `tether schema export schemas`, then `npm run generate` here. */

export type AgentStreamingEvents =
  | ChainStartEvent
  | ChatModelStartEvent
  | ChatModelStreamEvent
  | ToolStartEvent
  | ToolEndEvent
  | ChainEndEvent
  | ErrorEvent
  | ChatEvent
  | SpeechEvent
  | OpenUrlEvent
  | NeedsEvent;

export interface ChainStartEvent {
  event?: "on_chain_start";
  run_id?: string | null;
}
export interface ChatModelStartEvent {
  event?: "on_chat_model_start";
  run_id?: string | null;
  toolCalls?: ToolCallRecord[];
}
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
export interface ChatModelStreamEvent {
  data: string;
  event?: "on_chat_model_stream";
  run_id?: string | null;
}
export interface ToolStartEvent {
  call: ToolCall;
  data: string;
  event?: "on_tool_start";
  run_id?: string | null;
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
export interface ToolEndEvent {
  call_id: string;
  envelope: OkEnvelope | NeedsEnvelope | ErrorEnvelope;
  event?: "on_tool_end";
  run_id?: string | null;
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
export interface ChainEndEvent {
  data?: unknown;
  event?: "on_chain_end";
  reason?: string | null;
  run_id?: string | null;
  toolCalls?: ToolCallRecord[];
}
export interface ErrorEvent {
  data: {
    [k: string]: string;
  };
  event?: "error";
  run_id?: string | null;
}
/**
 * Text for the user's chat window (`send_chat`, seed 000).
 */
export interface ChatEvent {
  data: string;
  event?: "chat";
  run_id?: string | null;
}
/**
 * An utterance to speak (`say`, seed 000).
 */
export interface SpeechEvent {
  audio?: string | null;
  event?: "speech";
  run_id?: string | null;
  style?: string | null;
  utterance: string;
  voice_id?: string | null;
}
export interface OpenUrlEvent {
  event?: "open_url";
  run_id?: string | null;
  url: string;
}
/**
 * A tool needs information only the user can give (seed 002).
 */
export interface NeedsEvent {
  call_id: string;
  event?: "needs";
  needs: {
    [k: string]: boolean | string;
  };
  run_id?: string | null;
}
