/* Generated from schemas/envelope.v1.json by json-schema-to-typescript: do not edit; run `tether schema export schemas`, then `npm run generate` here. */

export type Envelope = OkEnvelope | NeedsEnvelope | ErrorEnvelope;

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
