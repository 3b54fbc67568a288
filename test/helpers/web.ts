// A browser-like client of the dashboard inside workerd: a cookie jar, form posts, the CSRF token.
import { type CallOptions, call } from "./api";

export class WebClient {
  cookies = new Map<string, string>();
  constructor(readonly ip = `198.51.100.${Math.floor(Math.random() * 250) + 1}`) {}

  async request(path: string, opts: CallOptions & { form?: Record<string, string | string[]> } = {}): Promise<Response> {
    const headers: Record<string, string> = { ...opts.headers };
    if (this.cookies.size) headers.Cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    let rawBody = opts.rawBody;
    if (opts.form) {
      const body = new URLSearchParams();
      for (const [k, v] of Object.entries(opts.form)) for (const value of [v].flat()) body.append(k, value);
      rawBody = body.toString();
      headers["Content-Type"] = "application/x-www-form-urlencoded";
    }
    const res = await call(path, {
      ...opts,
      headers,
      rawBody,
      ip: opts.ip ?? this.ip,
      redirect: "manual",
      method: opts.method ?? (rawBody !== undefined ? "POST" : "GET"),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";");
      const [name, value] = [pair!.slice(0, pair!.indexOf("=")), pair!.slice(pair!.indexOf("=") + 1)];
      const expired = attrs.some(
        (a) => /max-age=0\b/i.test(a.trim()) || (/^expires=/i.test(a.trim()) && Date.parse(a.trim().slice(8)) < Date.now()),
      );
      if (expired || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  /** The message an action left for the next page (its flash cookie), or "". */
  static flashOf(res: Response): string {
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("__Host-allele_flash="));
    return cookie
      ? (JSON.parse(decodeURIComponent(cookie.slice(cookie.indexOf("=") + 1, cookie.indexOf(";")))) as { text: string }).text
      : "";
  }

  /** The page's CSRF token (the hidden `_csrf` field of its first form). */
  static csrfOf(html: string): string {
    const m = /name="_csrf" value="([^"]+)"/.exec(html);
    if (!m) throw new Error("no _csrf field on the page");
    return m[1]!;
  }

  async signInWithKey(key: string): Promise<Response> {
    const page = await (await this.request("/sign-in")).text();
    return this.request("/sign-in", { form: { _csrf: WebClient.csrfOf(page), api_key: key, next: "/submissions" } });
  }

  /** The CSRF token of the signed-in session (from any page with a form). */
  async csrf(): Promise<string> {
    return WebClient.csrfOf(await (await this.request("/account")).text());
  }

  /** A state change with the session's token. */
  async post(path: string, form: Record<string, string | string[]> = {}): Promise<Response> {
    return this.request(path, { form: { _csrf: await this.csrf(), ...form } });
  }
}
