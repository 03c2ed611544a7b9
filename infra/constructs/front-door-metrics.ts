/**
 * What the front door tells CloudWatch about the requests it served, the
 * same four figures for either front door, so that one set of alarms and one
 * dashboard serve both. They count what never reached our code too (a
 * crashed or timed-out function, a throttled request).
 */
import type { Duration } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import type { Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';

export interface FrontDoorMetrics {
  /** For the dashboard's titles. */
  name: string;
  requests(period: Duration): Metric;
  clientErrors(period: Duration): Metric;
  serverErrors(period: Duration): Metric;
  /** Milliseconds, with a percentile statistic such as p99. */
  latency(period: Duration, statistic: string): Metric;
}

export function httpApiMetrics(api: HttpApi): FrontDoorMetrics {
  return {
    name: 'API Gateway',
    requests: (period) => api.metricCount({ period, statistic: 'Sum' }),
    clientErrors: (period) => api.metricClientError({ period, statistic: 'Sum' }),
    serverErrors: (period) => api.metricServerError({ period, statistic: 'Sum' }),
    latency: (period, statistic) => api.metricLatency({ period, statistic }),
  };
}

/**
 * Lambda's function URL metrics (UrlRequestCount, Url4xxCount, Url5xxCount),
 * and the router's duration for latency: AWS documents UrlRequestLatency for
 * the Average and Maximum only, Duration has percentiles. It leaves out the
 * URL's own few milliseconds.
 */
export function functionUrlMetrics(router: IFunction): FrontDoorMetrics {
  return {
    name: 'function URL',
    requests: (period) => router.metric('UrlRequestCount', { period, statistic: 'Sum' }),
    clientErrors: (period) => router.metric('Url4xxCount', { period, statistic: 'Sum' }),
    serverErrors: (period) => router.metric('Url5xxCount', { period, statistic: 'Sum' }),
    latency: (period, statistic) => router.metricDuration({ period, statistic }),
  };
}
