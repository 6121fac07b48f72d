// intake.js: a form sent to intake without leaving the page. MIT licence.
// <form data-intake> is taken over when the module loads; enhance(form) does it by hand.
// Each render of a form gets one Idempotency-Key, sent with every try, so a double
// click or a retry after a lost answer stores one submission. No inline script or
// style is made: state shows through attributes and classes the site styles.

const KIB = 1024;
const TOKENS = ["cf-turnstile-response", "h-captcha-response", "g-recaptcha-response"];
const RETRIES = 3; // after the first try, for a lost connection or a 502, 503 or 504
const LONGEST_WAIT = 60; // seconds: a longer Retry-After is told, not waited for

/** A fresh key: crypto.randomUUID, or 16 random bytes in hex where it is missing. */
export function newKey(crypto = globalThis.crypto) {
  if (crypto.randomUUID) return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Retry-After as seconds (from seconds or an HTTP date), or null. */
export function retryAfter(value, now = Date.now()) {
  if (value == null || value === "") return null;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/** Milliseconds to wait before retry number `attempt` (0 first), or null to stop. */
export function retryDelay(attempt, wait) {
  if (attempt >= RETRIES || (wait != null && wait > LONGEST_WAIT)) return null;
  return wait != null ? wait * 1000 : Math.min(1000 * 2 ** attempt, 8000);
}

const plural = (n, unit) => `${n} ${unit}${n === 1 ? "" : "s"}`;

/** A wait in words: "30 seconds", "2 minutes", "1 hour". */
export function waitWords(seconds) {
  if (seconds < 60) return plural(Math.max(1, seconds), "second");
  if (seconds < 3600) return plural(Math.ceil(seconds / 60), "minute");
  return plural(Math.ceil(seconds / 3600), "hour");
}

/** A size in words, KB being 1024 bytes as intake counts them. */
export function sizeWords(bytes) {
  if (bytes >= KIB * KIB) return `${+(bytes / KIB / KIB).toFixed(1)} MB`;
  if (bytes >= KIB) return `${+(bytes / KIB).toFixed(1)} KB`;
  return plural(bytes, "byte");
}

/** What a visitor reads for an answer that is not a success. `answer` is the parsed
 *  body or null, `wait` the Retry-After in seconds, `limits` the form's file limits. */
export function words(status, answer, wait, limits = {}) {
  const error = (answer && answer.error) || {};
  switch (status ? error.code : "network_error") {
    case "network_error":
      return "We could not reach the form service. Check your connection and try again.";
    case "rate_limited":
      return wait != null
        ? `Too many submissions. Please try again in ${waitWords(wait)}.`
        : "Too many submissions. Please wait a moment and try again.";
    case "payload_too_large": {
      let text = "That submission is too large: each answer may be up to 20 KB";
      if (limits.maxFile) text += `, each file up to ${sizeWords(limits.maxFile)}`;
      if (limits.maxTotal) text += `, all files together up to ${sizeWords(limits.maxTotal)}`;
      return text + ".";
    }
    case "challenge_failed":
      return "We could not verify that submission. Please complete the check again, then send.";
    case "service_unavailable":
      return wait != null
        ? `The form service is busy. Please try again in ${waitWords(wait)}.`
        : "The form service is busy. Please try again in a moment.";
    case "idempotency_conflict":
      return "This form was already sent. Send it again to make a new submission.";
  }
  return error.message || "Something went wrong. Please try again.";
}

/** Files over the form's limits, in words, or null: checked before sending, as the
 *  server checks them again. `files` is [{name, size}]. */
export function fileProblem(files, limits) {
  const { maxFile, maxTotal, maxFiles } = limits;
  if (maxFiles && files.length > maxFiles) return `Please choose at most ${maxFiles} files.`;
  const big = maxFile && files.find((file) => file.size > maxFile);
  if (big) return `${big.name} is too large: each file may be up to ${sizeWords(maxFile)}.`;
  const total = files.reduce((sum, file) => sum + file.size, 0);
  if (maxTotal && total > maxTotal) {
    return `These files are too large together: up to ${sizeWords(maxTotal)} in all.`;
  }
  return null;
}

/** Where each field error goes: [{name, message, id}] for the fields the form has, and
 *  the messages of those it lacks (shown in the status instead). */
export function fieldPlan(fields, has, prefix) {
  const placed = [];
  const unplaced = [];
  for (const [name, message] of Object.entries(fields || {})) {
    if (has(name)) placed.push({ name, message, id: `${prefix}-${placed.length}` });
    else unplaced.push(`${name}: ${message}`);
  }
  return { placed, unplaced };
}

/** The `_next` a success follows, as intake follows it: a path from the root or an
 *  http(s) URL, with no backslash, space or control character; else null. */
export function nextUrl(value) {
  return value && /^(\/(?![\/\\])|https?:\/\/)[^\s\\\0-\x1f]*$/i.test(value) ? value : null;
}

/** One try: resolves to {status, answer, wait}; status 0 when the connection failed.
 *  XMLHttpRequest rather than fetch, for its upload progress events. */
function send(url, body, headers, onProgress) {
  return new Promise((resolve) => {
    const request = new XMLHttpRequest();
    request.open("POST", url);
    for (const name in headers) request.setRequestHeader(name, headers[name]);
    request.upload.onprogress = (event) => event.lengthComputable && onProgress(event.loaded / event.total);
    request.onload = () => {
      let answer = null;
      try {
        answer = JSON.parse(request.responseText);
      } catch {} // not intake's answer: a proxy's page
      resolve({ status: request.status, answer, wait: retryAfter(request.getResponseHeader("Retry-After")) });
    };
    request.onerror = request.ontimeout = request.onabort = () => resolve({ status: 0, answer: null, wait: null });
    request.send(body);
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const number = (value) => (value ? Number(value) : undefined);
let forms = 0;

/** Takes over `form`'s submit. Options: success (the words shown), limits ({maxFile,
 *  maxTotal, maxFiles} in bytes; else data-intake-max-file, -max-total, -max-files). */
export function enhance(form, options = {}) {
  if (form.intake) return form.intake;
  const data = form.dataset;
  const limits = options.limits || {
    maxFile: number(data.intakeMaxFile),
    maxTotal: number(data.intakeMaxTotal),
    maxFiles: number(data.intakeMaxFiles),
  };
  const prefix = `intake-${++forms}`;
  const make = (tag, className, attributes = {}) => {
    const element = document.createElement(tag);
    element.className = className;
    for (const name in attributes) element.setAttribute(name, attributes[name]);
    return element;
  };
  const status = form.querySelector("[data-intake-status]") ||
    form.appendChild(make("p", "intake-status", { role: "status", "aria-live": "polite" }));
  const progress = form.querySelector("progress[data-intake-progress]") ||
    form.appendChild(make("progress", "intake-progress", { max: "1", hidden: "", "aria-label": "Upload progress" }));
  let key = newKey();
  let busy = false;

  const show = (state, text) => {
    form.dataset.intakeState = state;
    status.textContent = text;
  };
  const clearErrors = () => {
    for (const old of form.querySelectorAll(".intake-field-error")) old.remove();
    for (const field of form.querySelectorAll("[aria-invalid]")) {
      field.removeAttribute("aria-invalid");
      const rest = (field.getAttribute("aria-describedby") || "").split(" ").filter((id) => !id.startsWith(prefix));
      if (rest.length) field.setAttribute("aria-describedby", rest.join(" "));
      else field.removeAttribute("aria-describedby");
    }
  };
  const fieldOf = (name) => {
    const found = form.elements.namedItem(name);
    return found && (found.length && !found.tagName ? found[0] : found);
  };
  const markFields = (fields) => {
    const plan = fieldPlan(fields, (name) => !!fieldOf(name), prefix);
    for (const { name, message, id } of plan.placed) {
      const field = fieldOf(name);
      const note = make("span", "intake-field-error", { id });
      note.textContent = message;
      // After the field's label when it sits in one, or its group's fieldset.
      const anchor = field.closest("fieldset") || field.closest("label") || field;
      anchor.after(note);
      for (const each of form.querySelectorAll(`[name="${CSS.escape(name)}"]`)) {
        each.setAttribute("aria-invalid", "true");
        const ids = each.getAttribute("aria-describedby");
        each.setAttribute("aria-describedby", ids ? `${ids} ${id}` : id);
      }
    }
    if (plan.placed.length) fieldOf(plan.placed[0].name).focus();
    return plan.unplaced;
  };
  const resetWidgets = () => {
    for (const name of ["turnstile", "hcaptcha", "grecaptcha"]) {
      try {
        globalThis[name] && globalThis[name].reset();
      } catch {} // a widget not rendered yet has nothing to reset
    }
  };

  const body = () => {
    const entries = new FormData(form);
    for (const name of TOKENS) {
      // A widget rendered outside the form still leaves its token in the page.
      const outside = !entries.has(name) && document.querySelector(`[name="${name}"]`);
      if (outside && outside.value) entries.append(name, outside.value);
    }
    const files = [...entries.values()].filter((value) => typeof value !== "string" && value.name);
    if (files.length) return { files, payload: entries };
    const fields = {};
    for (const [name, value] of entries) {
      if (typeof value !== "string") continue; // an empty file input sends nothing
      fields[name] = name in fields ? [].concat(fields[name], value) : value;
    }
    return { files, payload: JSON.stringify(fields) };
  };

  const submit = async (event) => {
    event.preventDefault();
    if (busy) return;
    const buttons = form.querySelectorAll("button, input[type=submit]");
    const { files, payload } = body();
    clearErrors();
    const tooBig = files.length && fileProblem(files, limits);
    if (tooBig) return show("error", tooBig);
    busy = true;
    for (const button of buttons) button.disabled = true;
    progress.value = 0;
    progress.hidden = !files.length;
    data.intakeCode = "";
    show("sending", "Sending…");
    const headers = { Accept: "application/json", "Idempotency-Key": key };
    if (!files.length) headers["Content-Type"] = "application/json";
    let result;
    for (let attempt = 0; ; attempt++) {
      result = await send(form.action, payload, headers, (share) => (progress.value = share));
      const retryable = result.status === 0 || (result.status >= 502 && result.status <= 504);
      const delay = retryable ? retryDelay(attempt, result.wait) : null;
      if (delay == null) break;
      show("sending", "Not sent yet. Trying again…");
      await sleep(delay);
    }
    busy = false;
    progress.hidden = true;
    for (const button of buttons) button.disabled = false;
    const answer = result.answer;
    if (answer && answer.ok) {
      const next = nextUrl(form.elements.namedItem("_next")?.value);
      form.reset(); // and so a new key, for the next submission
      show("ok", options.success || data.intakeSuccess || answer.message);
      form.dispatchEvent(new CustomEvent("intake:success", { detail: answer }));
      if (next) location.assign(next);
      return;
    }
    const code = (answer && answer.error && answer.error.code) || "";
    form.dataset.intakeCode = code;
    let text = words(result.status, answer, result.wait, limits);
    if (code === "validation_failed") text = [text, ...markFields(answer.error.fields)].join(" ");
    if (code === "challenge_failed") resetWidgets();
    if (code === "idempotency_conflict") key = newKey();
    show("error", text);
  };

  form.addEventListener("submit", submit);
  form.addEventListener("reset", () => {
    key = newKey();
    clearErrors();
  });
  form.intake = { reset: () => form.reset(), get key() { return key; } };
  return form.intake;
}

if (typeof document !== "undefined") {
  const start = () => document.querySelectorAll("form[data-intake]").forEach((form) => enhance(form));
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
}
