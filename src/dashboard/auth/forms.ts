// The sign-in forms (docs/dashboard.md#sign-in): where to go back to afterwards, and the key typed in.
import { controlCharacter } from "../../model/fields";

/** Where a sign-in goes when `next` names no page of this site. */
export const DEFAULT_NEXT = "/submissions";

/** A stand-in origin to resolve `next` against: only what stays on it is a path of this site. */
const HERE = "https://here.invalid";

/**
 * Where to go back to after sign-in (docs/dashboard.md#sign-in): `path` is a path of this site as the
 * browser would read it. A browser strips TAB, CR and LF from a URL before it parses it, so `/<TAB>/evil.example`
 * is `//evil.example`, another site: `next` is resolved the way the browser resolves it (WHATWG URL
 * parsing, against an origin of ours) and kept only when it stays on that origin, in its serialised form
 * (which a Location header always takes). A `next` holding a control character is `refused` (a 400 page,
 * never a redirect); anything else that is not a path of this site becomes the default page.
 */
export function nextOf(next: unknown): { path: string; refused: boolean } {
  if (typeof next !== "string" || next === "") return { path: DEFAULT_NEXT, refused: false };
  if (controlCharacter(next)) return { path: DEFAULT_NEXT, refused: true };
  if (!/^\/(?![/\\])/.test(next)) return { path: DEFAULT_NEXT, refused: false };
  let url: URL;
  try {
    url = new URL(next, HERE);
  } catch {
    return { path: DEFAULT_NEXT, refused: false };
  }
  return { path: url.origin === HERE ? `${url.pathname}${url.search}${url.hash}` : DEFAULT_NEXT, refused: false };
}

/** The words of a refused `next`. */
export const NEXT_REFUSED = "The page to go back to after sign-in is not an address of this site (it holds a control character).";

/** The key typed in, as the API's `Authorization` header would carry it. */
export const bearerOf = (form: Record<string, string>) => `Bearer ${(form.api_key ?? "").trim()}`;

/** A sign-in link's token has this form; anything else is not looked up. */
export const LINK_TOKEN = /^[0-9A-Za-z]{40}$/;
