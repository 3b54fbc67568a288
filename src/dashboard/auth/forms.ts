// The sign-in forms (docs/dashboard.md#sign-in): where to go back to afterwards, and the key typed in.

/** Only a path of this site is a place to go back to after sign-in. */
export const safeNext = (next: unknown) => (typeof next === "string" && /^\/(?![/\\])/.test(next) ? next : "/submissions");

/** The key typed in, as the API's `Authorization` header would carry it. */
export const bearerOf = (form: Record<string, string>) => `Bearer ${(form.api_key ?? "").trim()}`;

/** A sign-in link's token has this form; anything else is not looked up. */
export const LINK_TOKEN = /^[0-9A-Za-z]{40}$/;
