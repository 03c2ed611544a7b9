/**
 * The placeholders of one request's expressions. Every attribute name goes
 * through a `#` placeholder (several are DynamoDB reserved words, and the
 * models keep the names) and every value through a `:` placeholder; a request
 * carries only the placeholders its expressions use, as DynamoDB requires.
 */
export class Expression {
  private readonly names = new Map<string, string>();
  private readonly values: Record<string, unknown> = {};
  private valueCount = 0;

  /** The placeholder path of an attribute, or of an entry of a map attribute (`name('free', 'VCPU')`). */
  name(...path: string[]): string {
    return path
      .map((segment) => {
        let placeholder = this.names.get(segment);
        if (placeholder === undefined) this.names.set(segment, (placeholder = `#n${this.names.size}`));
        return placeholder;
      })
      .join('.');
  }

  value(value: unknown): string {
    const placeholder = `:v${this.valueCount++}`;
    this.values[placeholder] = value;
    return placeholder;
  }

  /** ExpressionAttributeNames and ExpressionAttributeValues, each left out when empty. */
  attributes(): { ExpressionAttributeNames?: Record<string, string>; ExpressionAttributeValues?: Record<string, unknown> } {
    return {
      ...(this.names.size > 0 ? { ExpressionAttributeNames: Object.fromEntries([...this.names].map(([name, placeholder]) => [placeholder, name])) } : {}),
      ...(this.valueCount > 0 ? { ExpressionAttributeValues: this.values } : {}),
    };
  }
}

/** The placeholders of `map` that the expressions use: DynamoDB refuses a request carrying any other. */
export function usedPlaceholders<T>(map: Record<string, T> | undefined, ...expressions: (string | undefined)[]): Record<string, T> {
  const text = expressions.join(' ');
  return Object.fromEntries(Object.entries(map ?? {}).filter(([placeholder]) => new RegExp(`${placeholder}(?![A-Za-z0-9_])`).test(text)));
}
