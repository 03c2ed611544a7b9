/**
 * Policy files as operators write them: YAML (JSON is YAML), read by the
 * `yaml` library and then held to what policy files are: one flat mapping of
 * rule names to check strings, each written plain, single- or double-quoted.
 * Anything else (nesting, lists, block scalars, anchors, aliases, tags,
 * several documents, duplicate keys, a key with no value) is refused rather
 * than guessed at: a policy file read wrongly could grant access.
 *
 * Read where a person's file is read: by the local server (local/service.ts
 * hands this parser to shared/auth/policy-file.ts) and by the CDK app at
 * synth time (the `policyFile` context), which ships the rules to Lambda as
 * JSON. No Lambda bundle carries a YAML parser.
 */
import { isMap, isScalar, LineCounter, parseDocument, Scalar, type Node } from 'yaml';
import { PolicyFileError } from './policy-file.js';

const STRING_STYLES: readonly unknown[] = [Scalar.PLAIN, Scalar.QUOTE_SINGLE, Scalar.QUOTE_DOUBLE];

/** The string a key or value node holds, or a description of why it is not one. */
function flatString(node: Node | null): string | { refused: string } {
  if (!isScalar(node)) return { refused: node === null ? 'no value' : 'a nested mapping, list or alias' };
  if (node.tag !== undefined || node.anchor !== undefined) return { refused: 'a tag or anchor' };
  if (!STRING_STYLES.includes(node.type)) return { refused: 'a block scalar' };
  // The failsafe schema reads every scalar as a string, so `12`, `true` and `null` stay text.
  return String(node.value);
}

/** The rule name to check string mapping of a policy file's text. Throws PolicyFileError naming the line. */
export function parsePolicyFile(text: string): Record<string, string> {
  const lines = new LineCounter();
  const document = parseDocument(text, { schema: 'failsafe', uniqueKeys: true, lineCounter: lines, prettyErrors: false });
  const at = (offset: number | undefined) => `line ${lines.linePos(offset ?? 0).line}`;
  const [problem] = [...document.errors, ...document.warnings];
  if (problem) throw new PolicyFileError(`${at(problem.pos[0])}: ${problem.message}`);
  const root = document.contents;
  if (root === null) return {};
  if (!isMap(root)) throw new PolicyFileError(`${at(root.range?.[0])}: the file must be a mapping of rule names to check strings`);
  const rules = new Map<string, string>();
  for (const { key, value } of root.items) {
    const keyNode = key as Node | null;
    const name = flatString(keyNode);
    if (typeof name !== 'string') throw new PolicyFileError(`${at(keyNode?.range?.[0])}: a rule name must be a string, not ${name.refused}`);
    const valueNode = value as Node | null;
    const check = flatString(valueNode);
    const line = at((valueNode ?? keyNode)?.range?.[0]);
    if (typeof check !== 'string') throw new PolicyFileError(`${line}: the value of ${JSON.stringify(name)} must be a check string, not ${check.refused}`);
    // YAML reads an empty value as null, which oslo.policy takes as "always allowed": too easy to write by accident.
    if (check === '' && isScalar(valueNode) && valueNode.type === Scalar.PLAIN) {
      throw new PolicyFileError(`${line}: no value for ${JSON.stringify(name)} (write "" to allow everyone, "!" to allow no one)`);
    }
    rules.set(name, check);
  }
  return Object.fromEntries(rules);
}
