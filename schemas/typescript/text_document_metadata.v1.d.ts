/* Generated from schemas/text_document_metadata.v1.json by json-schema-to-typescript: do not edit; run `tether schema export schemas`, then `npm run generate` here. */

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
