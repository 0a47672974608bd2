// Writes one `<schema>.d.ts` beside this file for every JSON Schema in `..` (tether's exported schemas),
// or, with `--out DIR`, into DIR (the drift test compares a fresh run with the committed files).
import { readFile, readdir, writeFile, mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { compile } from "json-schema-to-typescript";

const here = dirname(fileURLToPath(import.meta.url));
const schemas = join(here, "..");
const at = process.argv.indexOf("--out");
const out = at >= 0 ? process.argv[at + 1] : here;
await mkdir(out, { recursive: true });

// What json-schema-to-typescript would misread in pydantic's schemas is left out or rewritten: pydantic
// titles every property after its name ("Tool Name"), which would make each a named type (only the models'
// own titles are kept); a `default` makes an untyped value an object (a type has no defaults); tuples are
// `prefixItems` in draft 2020-12 and `items` arrays for the generator; the root's `$id` would name it.
function untitled(schema, keep) {
  if (Array.isArray(schema)) return schema.map((item) => untitled(item, false));
  if (schema === null || typeof schema !== "object") return schema;
  const copy = {};
  for (const [key, value] of Object.entries(schema)) {
    if ((key === "title" && !keep) || key === "default" || key === "$id" || key === "$schema") continue;
    if (key === "prefixItems") {
      copy.items = untitled(value, false);
    } else if (key === "$defs") {
      copy[key] = Object.fromEntries(Object.entries(value).map(([name, def]) => [name, untitled(def, true)]));
    } else if (key === "properties") {
      copy[key] = Object.fromEntries(Object.entries(value).map(([name, prop]) => [name, untitled(prop, false)]));
    } else {
      copy[key] = untitled(value, false);
    }
  }
  return copy;
}

for (const file of (await readdir(schemas)).filter((f) => f.endsWith(".json")).sort()) {
  const schema = untitled(JSON.parse(await readFile(join(schemas, file), "utf8")), true);
  const stem = file.slice(0, -".json".length);
  const types = await compile(schema, stem, {
    bannerComment: `/* Generated from schemas/${file} by json-schema-to-typescript: do not edit; run \`tether schema export schemas\`, then \`npm run generate\` here. */`,
    additionalProperties: false,
    cwd: schemas,
    format: true,
  });
  await writeFile(join(out, `${stem}.d.ts`), types);
}
