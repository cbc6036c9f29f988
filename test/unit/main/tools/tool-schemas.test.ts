// The tools' published JSON schemas: portable (no construct a strict client refuses), and every
// argument and result field documented in docs/mcp.md's one table, with nothing there that the
// schemas do not have.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TERMINAL_TOOLS } from '../../../../src/main/tools/catalog.js';
import type { JsonSchema } from '../../../../src/main/tools/tool.js';

const DOCS = new URL('../../../../docs/mcp.md', import.meta.url);

/** Every place in a schema where `type` is an array, as JSON-pointer-like paths. */
function typeArrays(schema: unknown, path = '#'): string[] {
  if (Array.isArray(schema)) return schema.flatMap((item, index) => typeArrays(item, `${path}/${index}`));
  if (typeof schema !== 'object' || schema === null) return [];
  const found = Array.isArray((schema as { type?: unknown }).type) ? [`${path}/type`] : [];
  return [...found, ...Object.entries(schema).flatMap(([key, value]) => typeArrays(value, `${path}/${key}`))];
}

/** One documented or published field: `name` with `?` when optional, and its JSON type. */
interface Field {
  tool: string;
  direction: 'argument' | 'result';
  field: string;
  type: string;
}

/** The JSON type a table names for a property: its `type`, or `object` for a union of objects. */
function typeOf(property: JsonSchema): string {
  if (typeof property.type === 'string') return property.type;
  const variants = (property.oneOf ?? property.anyOf) as JsonSchema[] | undefined;
  if (variants?.every((variant) => variant.type === 'object')) return 'object';
  // A choice of constants of different types (`inputHidden`: true or 'likely'): documented as `literal`.
  if (variants?.every((variant) => 'const' in variant)) return 'literal';
  throw new Error(`no single type for ${JSON.stringify(property)}`);
}

/** Top-level fields of an object schema, and the fields of objects in its arrays as `name[].field`. */
function fieldsOf(schema: JsonSchema, prefix = ''): Array<{ field: string; type: string }> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).flatMap(([name, property]) => {
    const field = { field: `${prefix}${name}${required.has(name) ? '' : '?'}`, type: typeOf(property) };
    const items = property.items as JsonSchema | undefined;
    const nested =
      property.type === 'array' && items?.type === 'object' ? fieldsOf(items, `${prefix}${name}[].`) : [];
    return [field, ...nested];
  });
}

function publishedFields(): Field[] {
  return TERMINAL_TOOLS.flatMap((tool) => [
    ...fieldsOf(tool.inputSchema).map((field) => ({
      tool: tool.name,
      direction: 'argument' as const,
      ...field,
    })),
    ...fieldsOf(tool.outputSchema).map((field) => ({
      tool: tool.name,
      direction: 'result' as const,
      ...field,
    })),
  ]);
}

/** Rows of docs/mcp.md's field table: `| \`tool\` | argument/result | \`field\` | type | meaning |`. */
function documentedFields(markdown: string): Field[] {
  const row = /^\| `(terminal_\w+)` \| (argument|result) \| `([^`]+)` \| (\w+) \|/;
  return markdown.split('\n').flatMap((line) => {
    const match = row.exec(line);
    if (match === null) return [];
    return [
      { tool: match[1]!, direction: match[2] as Field['direction'], field: match[3]!, type: match[4]! },
    ];
  });
}

const key = (field: Field) => `${field.tool} ${field.direction} ${field.field}: ${field.type}`;

describe('tool schemas', () => {
  it('use no JSON-schema type arrays (MCP Inspector --strict flags ["integer", "null"]): absent values are omitted fields', () => {
    const found = TERMINAL_TOOLS.flatMap((tool) => [
      ...typeArrays(tool.inputSchema).map((path) => `${tool.name} input ${path}`),
      ...typeArrays(tool.outputSchema).map((path) => `${tool.name} output ${path}`),
    ]);
    expect(found).toEqual([]);
  });

  it('the walk finds a type array where there is one (so the check above can fail)', () => {
    expect(typeArrays({ properties: { a: { oneOf: [{ type: ['integer', 'null'] }] } } })).toEqual([
      '#/properties/a/oneOf/0/type',
    ]);
  });

  it('docs/mcp.md lists every argument and result field of the six tools, optional ones with ?, and no other', () => {
    const documented = documentedFields(readFileSync(DOCS, 'utf8')).map(key);
    const published = publishedFields().map(key);
    expect(published.length).toBeGreaterThan(50);
    expect(new Set(documented).size, 'a field is listed twice').toBe(documented.length);
    expect({
      missingFromDocs: published.filter((field) => !documented.includes(field)),
      notInSchemas: documented.filter((field) => !published.includes(field)),
    }).toEqual({ missingFromDocs: [], notInSchemas: [] });
  });
});
