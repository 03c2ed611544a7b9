/**
 * A synthesized CloudWatch alarm (AWS::CloudWatch::Alarm's properties)
 * evaluated as CloudWatch documents it, on series the test gives, so that an
 * alarm is shown to fire when its condition holds, with the gaps real
 * metrics have. Nothing here runs in AWS; it follows these documents:
 *
 * - "Evaluating an alarm": the last EvaluationPeriods datapoints, ALARM when
 *   DatapointsToAlarm (default: all of them) breach.
 * - "Configuring how CloudWatch alarms treat missing data": a missing
 *   datapoint is a breach (breaching), good (notBreaching), or not counted
 *   (missing, ignore); none at all is INSUFFICIENT_DATA (missing) or the
 *   state as it was (ignore: here OK).
 * - Metric math: an operator between series is computed where every
 *   operand has a datapoint, so a missing term leaves the result missing at
 *   that time; FILL(series, value) gives the value where it is missing;
 *   IF(condition, a, b).
 * - AWS/DynamoDB and AWS/Lambda publish a metric only for a period with
 *   something to count: no throttle, no datapoint.
 *
 * Series are per 5-minute period, oldest first, `undefined` where nothing was
 * published; an alarm with a longer period aggregates them with its statistic.
 */

export type Series = (number | undefined)[];
/** A metric's series by its name and dimensions: metricKey(name, dimensions). */
export type Metrics = Map<string, Series>;
export type AlarmState = 'ALARM' | 'OK' | 'INSUFFICIENT_DATA';

const BASE_PERIOD_SECONDS = 300;

/** How a test names a metric: its name and its dimensions' values in name order (a CloudFormation reference stands for its value). */
export function metricKey(metricName: string, dimensions: Record<string, unknown> = {}): string {
  const values = Object.keys(dimensions)
    .sort()
    .map((name) => `${name}=${JSON.stringify(dimensions[name])}`);
  return [metricName, ...values].join('|');
}

const dimensionsOf = (list: { Name: string; Value: unknown }[] = []): Record<string, unknown> =>
  Object.fromEntries(list.map((dimension) => [dimension.Name, dimension.Value]));

/** One metric's datapoints at the alarm's period: `statistic` over each group of 5-minute datapoints, missing where all are. */
function aggregated(series: Series, periodSeconds: number, statistic: string): Series {
  const per = periodSeconds / BASE_PERIOD_SECONDS;
  if (!Number.isInteger(per) || per < 1) throw new Error(`period ${periodSeconds} s is not a multiple of ${BASE_PERIOD_SECONDS} s`);
  const out: Series = [];
  // Aligned on the latest datapoint, as an alarm's evaluation ends at now.
  for (let end = series.length; end - per >= 0; end -= per) {
    const present = series.slice(end - per, end).filter((value): value is number => value !== undefined);
    if (present.length === 0) out.unshift(undefined);
    else if (statistic === 'Sum') out.unshift(present.reduce((sum, value) => sum + value, 0));
    else if (statistic === 'Maximum') out.unshift(Math.max(...present));
    else if (statistic === 'Average') out.unshift(present.reduce((sum, value) => sum + value, 0) / present.length);
    else throw new Error(`statistic ${statistic} not modelled`);
  }
  return out;
}

function stat(
  metrics: Metrics,
  metric: { MetricName: string; Dimensions?: { Name: string; Value: unknown }[] },
  periodSeconds: number,
  statistic: string,
  length: number,
): Series {
  const series = metrics.get(metricKey(metric.MetricName, dimensionsOf(metric.Dimensions))) ?? Array<undefined>(length).fill(undefined);
  return aggregated(series, periodSeconds, statistic);
}

// ------------------------------------------------------------------ metric math

type Token = { kind: 'number'; value: number } | { kind: 'name'; value: string } | { kind: 'op'; value: string };

function tokens(expression: string): Token[] {
  const out: Token[] = [];
  const pattern = /\s*(?:(\d+(?:\.\d+)?)|([A-Za-z_][A-Za-z0-9_]*)|(>=|<=|==|!=|[-+*/(),<>]))/y;
  let match: RegExpExecArray | null;
  while (pattern.lastIndex < expression.length && (match = pattern.exec(expression)) !== null) {
    if (match[1] !== undefined) out.push({ kind: 'number', value: Number(match[1]) });
    else if (match[2] !== undefined) out.push({ kind: 'name', value: match[2] });
    else out.push({ kind: 'op', value: match[3]! });
  }
  if (expression.slice(pattern.lastIndex).trim() !== '') throw new Error(`cannot read ${JSON.stringify(expression)}`);
  return out;
}

/** A datapoint-by-datapoint value: a series' values, missing where it has none. */
type Values = (number | undefined)[];

const combine = (a: Values, b: Values, f: (x: number, y: number) => number): Values =>
  a.map((x, index) => (x === undefined || b[index] === undefined ? undefined : f(x, b[index]!)));

const BINARY: Record<string, { precedence: number; apply: (x: number, y: number) => number }> = {
  '>=': { precedence: 1, apply: (x, y) => Number(x >= y) },
  '<=': { precedence: 1, apply: (x, y) => Number(x <= y) },
  '>': { precedence: 1, apply: (x, y) => Number(x > y) },
  '<': { precedence: 1, apply: (x, y) => Number(x < y) },
  '==': { precedence: 1, apply: (x, y) => Number(x === y) },
  '!=': { precedence: 1, apply: (x, y) => Number(x !== y) },
  '+': { precedence: 2, apply: (x, y) => x + y },
  '-': { precedence: 2, apply: (x, y) => x - y },
  '*': { precedence: 3, apply: (x, y) => x * y },
  '/': { precedence: 3, apply: (x, y) => x / y },
};

/** Evaluates `expression` over series named by their ids, `length` datapoints each. */
function evaluateExpression(expression: string, series: Map<string, Values>, length: number): Values {
  const list = tokens(expression);
  let at = 0;
  const peek = () => list[at];
  const expect = (value: string) => {
    const token = list[at++];
    if (token?.kind !== 'op' || token.value !== value) throw new Error(`expected ${value} in ${expression}`);
  };
  const primary = (): Values => {
    const token = list[at++];
    if (token === undefined) throw new Error(`unexpected end of ${expression}`);
    if (token.kind === 'number') return Array<number>(length).fill(token.value);
    if (token.kind === 'op' && token.value === '(') {
      const inner = binary(0);
      expect(')');
      return inner;
    }
    if (token.kind === 'op' && token.value === '-') return primary().map((value) => (value === undefined ? undefined : -value));
    if (token.kind !== 'name') throw new Error(`unexpected ${token.value} in ${expression}`);
    if (peek()?.kind === 'op' && peek()!.value === '(') {
      at++;
      const args: Values[] = [binary(0)];
      while (peek()?.kind === 'op' && peek()!.value === ',') {
        at++;
        args.push(binary(0));
      }
      expect(')');
      if (token.value === 'FILL') return args[0]!.map((value, index) => value ?? args[1]![index]);
      if (token.value === 'IF')
        return args[0]!.map((condition, index) => (condition === undefined ? undefined : condition !== 0 ? args[1]![index] : args[2]?.[index]));
      throw new Error(`function ${token.value} not modelled`);
    }
    const values = series.get(token.value);
    if (values === undefined) throw new Error(`${expression} names ${token.value}, which the alarm does not define`);
    return values;
  };
  const binary = (minimum: number): Values => {
    let left = primary();
    for (;;) {
      const token = peek();
      const operator = token?.kind === 'op' ? BINARY[token.value] : undefined;
      if (operator === undefined || operator.precedence < minimum) return left;
      at++;
      left = combine(left, binary(operator.precedence + 1), operator.apply);
    }
  };
  const result = binary(0);
  if (at !== list.length) throw new Error(`cannot read the rest of ${expression}`);
  return result;
}

// ------------------------------------------------------------------ the alarm

/** The alarm's datapoints, at its period, from 5-minute series of `length` periods. */
export function alarmSeries(alarm: any, metrics: Metrics, length: number): Series {
  if (alarm.MetricName !== undefined) {
    const statistic = alarm.Statistic ?? (alarm.ExtendedStatistic === 'p99' ? 'Maximum' : alarm.ExtendedStatistic);
    return stat(metrics, alarm, alarm.Period, statistic, length);
  }
  const entries: any[] = alarm.Metrics;
  const series = new Map<string, Values>();
  let returned: Values | undefined;
  // Plain metrics first, then expressions in order (an expression may use another defined before it).
  for (const entry of entries.filter((entry) => entry.MetricStat !== undefined)) {
    const { Metric, Period, Stat } = entry.MetricStat;
    series.set(entry.Id, stat(metrics, Metric, Period, Stat, length));
    if (entry.ReturnData !== false) returned = series.get(entry.Id);
  }
  const periods = series.values().next().value?.length ?? 0;
  for (const entry of entries.filter((entry) => entry.Expression !== undefined)) {
    series.set(entry.Id, evaluateExpression(entry.Expression, series, periods));
    if (entry.ReturnData !== false) returned = series.get(entry.Id);
  }
  if (returned === undefined) throw new Error('the alarm returns no series');
  return returned;
}

const breaches = (alarm: any, value: number): boolean => {
  switch (alarm.ComparisonOperator) {
    case 'GreaterThanThreshold':
      return value > alarm.Threshold;
    case 'GreaterThanOrEqualToThreshold':
      return value >= alarm.Threshold;
    case 'LessThanThreshold':
      return value < alarm.Threshold;
    case 'LessThanOrEqualToThreshold':
      return value <= alarm.Threshold;
    default:
      throw new Error(`comparison ${alarm.ComparisonOperator} not modelled`);
  }
};

/** The alarm's state after the last of `length` 5-minute periods of `metrics`. */
export function alarmState(alarm: any, metrics: Metrics, length: number): AlarmState {
  const datapoints = alarmSeries(alarm, metrics, length).slice(-alarm.EvaluationPeriods);
  const needed = alarm.DatapointsToAlarm ?? alarm.EvaluationPeriods;
  const treat = alarm.TreatMissingData ?? 'missing';
  let breaching = 0;
  let present = 0;
  for (const value of datapoints) {
    if (value === undefined) {
      if (treat === 'breaching') breaching++;
      continue;
    }
    present++;
    if (breaches(alarm, value)) breaching++;
  }
  if (breaching >= needed) return 'ALARM';
  if (present === 0 && treat === 'missing') return 'INSUFFICIENT_DATA';
  return 'OK';
}
