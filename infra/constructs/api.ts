/**
 * The HTTP API: one route per entry of the route table
 * (shared/http/routes.ts), integrated with its family's function, plus a
 * $default route to the root function so that unknown paths and methods get
 * Placement's own 404 and 405. Every route but the public version document
 * goes through the authorizer. The one stage is throttled (infra/brakes.ts)
 * and, when asked (`-c accessLog=true`), writes an access log.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { HttpApi, HttpMethod, HttpRoute, HttpRouteKey, HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaAuthorizer, HttpLambdaResponseType } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ROUTES, type HandlerName } from '../../shared/http/routes.js';

const AUTH_TOKEN_IDENTITY_SOURCE = '$request.header.X-Auth-Token';

/**
 * The access log: one JSON line per request, as small as it can be while
 * it still says who asked what, how it was answered and why API Gateway
 * refused it (authorizer or integration error). `user` is the Keystone user
 * the authorizer found. The time is the log event's own.
 */
export const ACCESS_LOG_FORMAT = JSON.stringify({
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  method: '$context.httpMethod',
  route: '$context.routeKey',
  status: '$context.status',
  ms: '$context.responseLatency',
  bytes: '$context.responseLength',
  user: '$context.authorizer.userId',
  authError: '$context.authorizer.error',
  error: '$context.integrationErrorMessage',
});

export interface PlacementApiProps {
  apiName: string;
  handlers: Record<HandlerName, IFunction>;
  authorizer: IFunction;
  /** API Gateway caches the authorizer's answer per token this long; 0: asks it on every request. */
  authorizerCacheTtlSeconds: number;
  /** CORS is configured: browsers' preflight requests carry no token and must reach the handlers' CORS middleware unauthenticated. */
  corsPreflight: boolean;
  /** The stage's steady requests per second and token-bucket size; beyond them API Gateway answers 429. */
  throttle: { rateLimit: number; burstLimit: number };
  logRetentionDays: number;
  /** Write the access log (ACCESS_LOG_FORMAT) to a log group of its own. */
  accessLog: boolean;
}

export class PlacementApi extends Construct {
  readonly httpApi: HttpApi;
  /** The access log's group, when the stage writes one. */
  readonly accessLogs?: LogGroup;

  constructor(scope: Construct, id: string, props: PlacementApiProps) {
    super(scope, id);
    this.httpApi = new HttpApi(this, 'HttpApi', { apiName: props.apiName, description: 'OpenStack Placement API', createDefaultStage: false });
    if (props.accessLog) this.accessLogs = new LogGroup(this, 'AccessLogs', { retention: props.logRetentionDays as RetentionDays });
    // The stage API Gateway would create, with the same id, plus the brakes and the access log if any.
    const stage = new HttpStage(this.httpApi, 'DefaultStage', {
      httpApi: this.httpApi,
      autoDeploy: true,
      throttle: props.throttle,
      accessLogSettings:
        this.accessLogs === undefined
          ? undefined
          : { destination: new LogGroupLogDestination(this.accessLogs), format: AccessLogFormat.custom(ACCESS_LOG_FORMAT) },
    });
    if (this.accessLogs === undefined) {
      Validations.of(stage).acknowledge({
        id: 'AwsSolutions-APIG1',
        reason:
          'Off by default for its price: a line of about 220 bytes a request, $0.11 per million requests, as much as the rest of the logs ' +
          "(npm run log-report); the front door's metrics, the functions' metric aggregates and their error logs remain, and -c accessLog=true turns it on",
      });
    }

    const caching = props.authorizerCacheTtlSeconds > 0;
    const authorizer = new HttpLambdaAuthorizer('Authorizer', props.authorizer, {
      authorizerName: 'placement-auth',
      responseTypes: [HttpLambdaResponseType.SIMPLE],
      // The cache is keyed on the identity sources; without caching there is none, so that a request
      // without a token reaches the authorizer and gets Placement's 401 rather than API Gateway's.
      identitySource: caching ? [AUTH_TOKEN_IDENTITY_SOURCE] : [],
      resultsCacheTtl: Duration.seconds(props.authorizerCacheTtlSeconds),
    });

    const integrations = new Map<HandlerName, HttpLambdaIntegration>();
    const integration = (family: HandlerName) => {
      let existing = integrations.get(family);
      if (existing === undefined) {
        existing = new HttpLambdaIntegration(`${family}Integration`, props.handlers[family]);
        integrations.set(family, existing);
      }
      return existing;
    };

    for (const route of ROUTES) {
      const [added] = this.httpApi.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: integration(route.handler),
        // A route without a policy rule is the public version document.
        authorizer: route.policy === undefined ? undefined : authorizer,
      });
      if (route.policy === undefined) {
        Validations.of(added!).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason:
            "GET / is Placement's version document, public upstream too: clients (nova, osc-placement) read the microversion range there before " +
            'they authenticate; it reads nothing and answers the same to everyone',
        });
      }
    }
    if (props.corsPreflight) {
      for (const path of ['/', '/{proxy+}']) {
        const [preflight] = this.httpApi.addRoutes({ path, methods: [HttpMethod.OPTIONS], integration: integration('root') });
        Validations.of(preflight!).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason:
            'Browsers send CORS preflights (OPTIONS) without credentials, so they cannot pass the token authorizer; the root handler only answers ' +
            'with the CORS headers the configuration allows, reads nothing, and the real request that follows is authorized',
        });
      }
    }
    new HttpRoute(this, 'DefaultRoute', {
      httpApi: this.httpApi,
      routeKey: HttpRouteKey.DEFAULT,
      integration: integration('root'),
      authorizer,
    });
  }
}
