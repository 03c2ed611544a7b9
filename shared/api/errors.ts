/**
 * The one typed error of the service. Handlers and the domain throw it; the
 * error middleware (shared/http/middleware/error-response.ts) is the only place that
 * turns it into Placement's JSON error body.
 */

/** Error codes Placement puts in the `code` field from microversion 1.23. */
export const ErrorCode = {
  DEFAULT: 'placement.undefined_code',
  INVENTORY_INUSE: 'placement.inventory.inuse',
  CONCURRENT_UPDATE: 'placement.concurrent_update',
  DUPLICATE_NAME: 'placement.duplicate_name',
  PROVIDER_IN_USE: 'placement.resource_provider.inuse',
  PROVIDER_CANNOT_DELETE_PARENT: 'placement.resource_provider.cannot_delete_parent',
  RESOURCE_PROVIDER_NOT_FOUND: 'placement.resource_provider.not_found',
  ILLEGAL_DUPLICATE_QUERYPARAM: 'placement.query.duplicate_key',
  QUERYPARAM_BAD_VALUE: 'placement.query.bad_value',
  QUERYPARAM_MISSING_VALUE: 'placement.query.missing_value',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  413: 'Request Entity Too Large',
  415: 'Unsupported Media Type',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
};

/** The generic sentence upstream (webob) puts before the specific message. */
const EXPLANATIONS: Record<number, string> = {
  400: 'The server could not comply with the request since it is either malformed or otherwise incorrect.',
  401: 'This server could not verify that you are authorized to access the document you requested. Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required.',
  403: 'Access was denied to this resource.',
  404: 'The resource could not be found.',
  409: 'There was a conflict when trying to complete your request.',
  413: 'The request is larger than the server is willing or able to process.',
  500: 'The server has either erred or is incapable of performing the requested operation.',
  501: 'The server has either erred or is incapable of performing the requested operation.',
  503: 'The server is currently unavailable. Please try again at a later time.',
};

export interface HttpErrorOptions {
  code?: ErrorCode;
  headers?: Record<string, string>;
  /** Extra members of the error object (406 adds max_version/min_version). */
  extra?: Record<string, unknown>;
  /** Replaces the default explanation sentence (405, 406 and 415 name the request's method or type). */
  explanation?: string;
  /** That sentence as webob's own template for the status lays it out in HTML pages (405, 406, 415). */
  htmlExplanation?: string;
  /** False for errors raised before the microversion is known (no openstack-api-version header). */
  versioned?: boolean;
  /**
   * False where upstream's error escapes its microversion middleware as an
   * exception instead of a response (uncaught object-layer NotFound, policy
   * refusals, unknown paths): it then gets openstack-api-version but no Vary.
   */
  vary?: boolean;
  /**
   * Raised where upstream's authentication middlewares answer, outside
   * Placement's error formatter: rendered as webob's own error page, or as
   * this fixed JSON document when one is given (keystonemiddleware's 401).
   */
  bare?: boolean | { document: unknown };
}

export class HttpError extends Error {
  readonly status: number;
  readonly title: string;
  readonly code: ErrorCode;
  readonly headers: Record<string, string>;
  readonly extra: Record<string, unknown>;
  readonly explanation: string | undefined;
  readonly htmlExplanation: string | undefined;
  readonly versioned: boolean;
  readonly vary: boolean;
  readonly bare: boolean | { document: unknown };

  constructor(status: number, message: string, options: HttpErrorOptions = {}) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
    this.title = TITLES[status] ?? 'Error';
    this.code = options.code ?? ErrorCode.DEFAULT;
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
    this.explanation = options.explanation;
    this.htmlExplanation = options.htmlExplanation;
    this.versioned = options.versioned ?? true;
    this.vary = options.vary ?? true;
    this.bare = options.bare ?? false;
  }

  /** The generic sentence for this status, empty when webob has none we use. */
  get explanationSentence(): string {
    return this.explanation ?? EXPLANATIONS[this.status] ?? '';
  }

  /** The `detail` text, laid out as upstream lays it out. */
  get detail(): string {
    if (this.explanation !== undefined) return `${this.explanation} \n\n ${this.message}`;
    const explanation = EXPLANATIONS[this.status];
    return explanation === undefined ? this.message : `${explanation}\n\n ${this.message}  `;
  }
}

export const badRequest = (message: string, code?: ErrorCode) => new HttpError(400, message, { code });
export const notFound = (message: string, code?: ErrorCode) => new HttpError(404, message, { code });
export const conflict = (message: string, code?: ErrorCode) => new HttpError(409, message, { code });
export const forbidden = (message: string) => new HttpError(403, message, { vary: false });
/** A 404 for an object upstream's handler lets its object layer report (no Vary header, see HttpErrorOptions.vary). */
export const objectNotFound = (message: string) => new HttpError(404, message, { vary: false });
/**
 * 503 for a request the service could not complete in time or without its
 * database: retries already ran, so the client is asked to try again shortly.
 */
export const serviceUnavailable = (message: string) => new HttpError(503, message, { headers: { 'retry-after': '1' } });
