/**
 * The JSON Schema (draft 4) keywords Placement's request schemas use: the
 * shape shared/schemas declares and shared/http/validation.ts checks, here
 * below both so that the schemas stay data that imports no HTTP plumbing.
 */
export type JsonType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean' | 'null';

/** The draft-4 keywords in use; a schema's keywords are checked in its key order, as upstream's are. */
export interface JsonSchema {
  type?: JsonType | JsonType[];
  enum?: unknown[];
  format?: 'uuid';
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  // objects
  properties?: Record<string, JsonSchema>;
  patternProperties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  required?: string[];
  minProperties?: number;
  maxProperties?: number;
  // arrays
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  // strings and numbers
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
}
