/* Generated from schemas/tool_spec.v1.json by json-schema-to-typescript: do not edit; run `tether schema export schemas`, then `npm run generate` here. */

/**
 * Everything tether knows about a tool, whichever source defined it.
 */
export interface ToolSpec {
  category?: string | null;
  description?: string;
  examples?: ToolExample[];
  idempotency_fields?: string[];
  input_schema?: {
    [k: string]: unknown;
  };
  metadata?: {
    [k: string]: unknown;
  };
  name: string;
  output_schema?: {
    [k: string]: unknown;
  } | null;
  priority?: number;
  rate_limit?: RateLimit | null;
  requires_why?: boolean;
  sandbox?: SandboxPolicy;
  scopes?: string[];
  sequential?: boolean;
  side_effects?: "none" | "idempotent" | "mutating";
}
/**
 * One example call of a tool, shown to models in tool prompts (seeds 001 and 003).
 */
export interface ToolExample {
  input: {
    [k: string]: unknown;
  };
  output?: unknown;
  why?: string | null;
}
/**
 * A token bucket: at most `calls` calls in any window of `per_seconds` seconds, per principal.
 */
export interface RateLimit {
  calls: number;
  per_seconds: number;
}
/**
 * What a tool may touch while it runs (seed 001 §2).
 */
export interface SandboxPolicy {
  filesystem?: string[];
  isolation?: "none" | "process";
  network?: boolean;
  timeout_ms?: number | null;
}
