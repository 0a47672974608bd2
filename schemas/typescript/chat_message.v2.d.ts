/* Generated from schemas/chat_message.v2.json by json-schema-to-typescript: do not edit; run `tether schema export schemas`, then `npm run generate` here. */

/**
 * A chat message as Kalygo's frontends render it: the text and the typed records of the tool calls made
 * for it (seed 004's `chat_message.v2`).
 */
export interface ChatMessageV2 {
  content: string;
  role: "user" | "assistant" | "system";
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
