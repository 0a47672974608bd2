/* Generated from schemas/qa_metadata.v1.json by json-schema-to-typescript: do not edit; run `tether schema export schemas`, then `npm run generate` here. */

/**
 * One question and answer from an ingested CSV file (seed 004).
 */
export interface QAMetadata {
  a: string;
  content: string;
  created_at?: string | null;
  filename: string;
  last_edited_at?: string | null;
  q: string;
  row_number: number;
  upload_timestamp: string;
  user_email: string;
  user_id: string;
}
