// The Content-Security-Policy of every page Allele serves (the dashboard, /docs): scripts, styles,
// images, fonts and requests from this origin only (the editor and Swagger UI inject their own <style>
// elements, hence 'unsafe-inline' for styles only), no plugins, never framed by another site.
export const SAME_ORIGIN_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");
