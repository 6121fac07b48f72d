// Types of intake.js, the browser client of an intake service.

/** A form's file limits, in bytes, checked before sending (the server checks again). */
export interface FileLimits {
  maxFile?: number;
  maxTotal?: number;
  maxFiles?: number;
}

export interface EnhanceOptions {
  /** The words shown after a success; else data-intake-success, else intake's message. */
  success?: string;
  /** Else read from data-intake-max-file, data-intake-max-total, data-intake-max-files. */
  limits?: FileLimits;
}

/** A success as intake answers it; the detail of the form's `intake:success` event. */
export interface Accepted {
  ok: true;
  submission_id: string;
  message: string;
}

/** intake's error envelope. */
export interface Refused {
  ok: false;
  error: { code: string; message: string; fields?: Record<string, string> };
  request_id: string;
}

export interface EnhancedForm {
  /** Resets the form, which also gives it a new Idempotency-Key. */
  reset(): void;
  /** The Idempotency-Key every try of this render sends. */
  readonly key: string;
}

/** Takes over the form's submit; calling it again on the same form returns the same. */
export function enhance(form: HTMLFormElement, options?: EnhanceOptions): EnhancedForm;

/** A new Idempotency-Key. */
export function newKey(crypto?: Crypto): string;
/** A Retry-After header (seconds or an HTTP date) as seconds from `now`, or null. */
export function retryAfter(value: string | null | undefined, now?: number): number | null;
/** Milliseconds before retry number `attempt` (from 0), or null when not to retry. */
export function retryDelay(attempt: number, wait: number | null): number | null;
export function waitWords(seconds: number): string;
export function sizeWords(bytes: number): string;
/** What a visitor reads for a refused try; status 0 is a failed connection. */
export function words(
  status: number,
  answer: Refused | null,
  wait: number | null,
  limits?: FileLimits,
): string;
export function fileProblem(files: { name: string; size: number }[], limits: FileLimits): string | null;
export function fieldPlan(
  fields: Record<string, string> | undefined,
  has: (name: string) => boolean,
  prefix: string,
): { placed: { name: string; message: string; id: string }[]; unplaced: string[] };
export function nextUrl(value: string | null | undefined): string | null;

declare global {
  interface HTMLFormElementEventMap {
    "intake:success": CustomEvent<Accepted>;
  }
}
