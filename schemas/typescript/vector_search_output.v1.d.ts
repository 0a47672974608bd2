/* Generated from schemas/vector_search_output.v1.json by json-schema-to-typescript: do not edit; run `tether schema export schemas`, then `npm run generate` here. */

/**
 * The `output` of a `vectorSearch` / `vectorSearchWithReranking` tool-call record (seed 004).
 */
export interface VectorSearchOutput {
  index: string;
  namespace: string;
  results: VectorSearchResult[];
}
/**
 * One hit of a `vectorSearch` / `vectorSearchWithReranking` tool (seed 004).
 */
export interface VectorSearchResult {
  id: string;
  metadata: QAMetadata | TextDocumentMetadata;
  rerankScore?: number | null;
  score: number;
}
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
/**
 * A chunk of an ingested `.txt`/`.md` document (seed 004); YAML front matter adds `file_<key>` fields.
 */
export interface TextDocumentMetadata {
  chunkId: number;
  chunkNumber: number;
  chunkSizeTokens: number;
  content: string;
  filename: string;
  totalChunks: number;
  uploadTimestamp: string;
  [k: string]: unknown;
}
