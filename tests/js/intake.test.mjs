// The logic of src/intake/browser/intake.js under Node's test runner:
// node --test tests/js/
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  fieldPlan,
  fileProblem,
  newKey,
  nextUrl,
  retryAfter,
  retryDelay,
  sizeWords,
  waitWords,
  words,
} from "../../src/intake/browser/intake.js";

const MIB = 1024 * 1024;

test("a key is a UUID from crypto.randomUUID, a new one each time", () => {
  const first = newKey();
  assert.match(first, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.notEqual(newKey(), first);
});

test("without randomUUID a key is 16 random bytes in hex", () => {
  const crypto = { getRandomValues: (bytes) => bytes.fill(171) };
  assert.equal(newKey(crypto), "ab".repeat(16));
});

test("Retry-After is read as seconds or as an HTTP date", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  assert.equal(retryAfter("30", now), 30);
  assert.equal(retryAfter("Thu, 01 Jan 2026 00:01:30 GMT", now), 90);
  assert.equal(retryAfter("Wed, 31 Dec 2025 23:00:00 GMT", now), 0); // already past
  assert.equal(retryAfter(null, now), null);
  assert.equal(retryAfter("soon", now), null);
});

test("retries back off 1, 2, 4 seconds, then stop", () => {
  assert.deepEqual([0, 1, 2, 3].map((n) => retryDelay(n, null)), [1000, 2000, 4000, null]);
});

test("a Retry-After sets the wait, and one over a minute is told rather than waited", () => {
  assert.equal(retryDelay(0, 5), 5000);
  assert.equal(retryDelay(2, 0), 0);
  assert.equal(retryDelay(0, 120), null);
});

test("waits and sizes are words", () => {
  assert.equal(waitWords(1), "1 second");
  assert.equal(waitWords(30), "30 seconds");
  assert.equal(waitWords(61), "2 minutes");
  assert.equal(waitWords(3600), "1 hour");
  assert.equal(sizeWords(10 * MIB), "10 MB");
  assert.equal(sizeWords(1.5 * MIB), "1.5 MB");
  assert.equal(sizeWords(20 * 1024), "20 KB");
  assert.equal(sizeWords(1), "1 byte");
});

const refusal = (code, message = "the server's words") => ({
  ok: false,
  error: { code, message },
  request_id: "req_1",
});

test("a 429 says when to try again, from Retry-After", () => {
  assert.equal(
    words(429, refusal("rate_limited"), 30),
    "Too many submissions. Please try again in 30 seconds.",
  );
  assert.equal(
    words(429, refusal("rate_limited"), null),
    "Too many submissions. Please wait a moment and try again.",
  );
  // The monthly quota has no wait: its own words.
  assert.equal(words(429, refusal("quota_exceeded", "Limit reached."), null), "Limit reached.");
});

test("a 413 names the limits", () => {
  assert.equal(
    words(413, refusal("payload_too_large"), null),
    "That submission is too large: each answer may be up to 20 KB.",
  );
  assert.equal(
    words(413, refusal("payload_too_large"), null, { maxFile: 10 * MIB, maxTotal: 25 * MIB }),
    "That submission is too large: each answer may be up to 20 KB, each file up to 10 MB, " +
      "all files together up to 25 MB.",
  );
});

test("a 503, a lost connection and a failed challenge are words, never a status", () => {
  assert.equal(
    words(503, refusal("service_unavailable"), 2),
    "The form service is busy. Please try again in 2 seconds.",
  );
  assert.match(words(0, null, null), /could not reach the form service/);
  assert.match(words(403, refusal("challenge_failed"), null), /complete the check again/);
  assert.equal(words(403, refusal("form_disabled", "Not open."), null), "Not open.");
  assert.equal(words(502, null, null), "Something went wrong. Please try again.");
});

test("files over a limit are refused before sending, with the limit", () => {
  const limits = { maxFile: 1 * MIB, maxTotal: 2 * MIB, maxFiles: 2 };
  const small = { name: "a.pdf", size: 1000 };
  assert.equal(fileProblem([small], limits), null);
  assert.equal(
    fileProblem([{ name: "big.pdf", size: MIB + 1 }], limits),
    "big.pdf is too large: each file may be up to 1 MB.",
  );
  assert.equal(
    fileProblem([small, small, small], limits),
    "Please choose at most 2 files.",
  );
  const half = { name: "b.pdf", size: 0.75 * MIB };
  assert.equal(
    fileProblem([half, half], { ...limits, maxTotal: 1.25 * MIB }),
    "These files are too large together: up to 1.3 MB in all.",
  );
  assert.equal(fileProblem([{ name: "any", size: 10 ** 9 }], {}), null); // no limits known
});

test("field errors go to the fields the form has; the rest are listed", () => {
  const plan = fieldPlan(
    { email: "Enter an email address.", message: "Too long.", ghost: "Unknown." },
    (name) => name !== "ghost",
    "intake-1",
  );
  assert.deepEqual(plan, {
    placed: [
      { name: "email", message: "Enter an email address.", id: "intake-1-0" },
      { name: "message", message: "Too long.", id: "intake-1-1" },
    ],
    unplaced: ["ghost: Unknown."],
  });
  assert.deepEqual(fieldPlan(undefined, () => true, "p"), { placed: [], unplaced: [] });
});

test("_next is followed when a path from the root or an http(s) URL", () => {
  assert.equal(nextUrl("/thanks.html"), "/thanks.html");
  assert.equal(nextUrl("https://example.com/thanks"), "https://example.com/thanks");
  assert.equal(nextUrl("//evil.example/"), null);
  assert.equal(nextUrl("/\\evil.example/"), null);
  assert.equal(nextUrl("/thanks page"), null);
  assert.equal(nextUrl("/thanks\u00a0"), null);
  assert.equal(nextUrl("thanks.html"), null);
  assert.equal(nextUrl("javascript:alert(1)"), null);
  assert.equal(nextUrl(undefined), null);
});
