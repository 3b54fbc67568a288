// A streaming reader of multipart/form-data bodies (RFC 7578): parts one after another, each part's bytes
// as they arrive, never the whole body in memory. `Request.formData()` holds every file whole, and a
// data file may be 100 MiB of a Worker's 128 MB (docs/api.md#data-files); this reads a part's bytes in the
// chunks the body arrives in, keeping at most one chunk and a delimiter's length of them.

export class MultipartError extends Error {}

export interface MultipartPart {
  /** The form field's name (Content-Disposition `name`). */
  name: string;
  /** The part's file name (`filename*` when given, else `filename`), or null for a plain field. */
  filename: string | null;
  /** The part's Content-Type header, or null. */
  contentType: string | null;
  /** The part's bytes, chunk by chunk. Read it to the end (or not at all) before asking for the next part. */
  body: AsyncIterable<Uint8Array>;
}

export interface MultipartOptions {
  /** The most header bytes one part may have (16 KiB). */
  maxHeaderBytes?: number;
  /** The most parts a body may have (16). */
  maxParts?: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const CRLF = encoder.encode("\r\n");
const HEADER_END = encoder.encode("\r\n\r\n");

/** The boundary of a `multipart/form-data` Content-Type, or null when the type is another one or has none. */
export function boundaryOf(contentType: string | null | undefined): string | null {
  if (!contentType) return null;
  const [type, ...params] = splitParams(contentType);
  if (type?.toLowerCase() !== "multipart/form-data") return null;
  const boundary = params.find(([key]) => key === "boundary")?.[1];
  // RFC 2046: 1..70 characters, and a delimiter line must fit what a reader keeps of it.
  return boundary && boundary.length <= 70 ? boundary : null;
}

/** `value; key=v; key2="quoted"` → [value, [key, v], …]: keys lower-cased, quoted strings unescaped. */
function splitParams(header: string): [string, ...[string, string][]] {
  const out: [string, string][] = [];
  let i = header.indexOf(";");
  const head = (i < 0 ? header : header.slice(0, i)).trim();
  while (i >= 0 && i < header.length) {
    i++;
    while (header[i] === " " || header[i] === "\t") i++;
    const eq = header.indexOf("=", i);
    if (eq < 0) break;
    const key = header.slice(i, eq).trim().toLowerCase();
    let value = "";
    i = eq + 1;
    while (header[i] === " " || header[i] === "\t") i++;
    if (header[i] === '"') {
      i++;
      while (i < header.length && header[i] !== '"') {
        if (header[i] === "\\" && i + 1 < header.length) i++;
        value += header[i];
        i++;
      }
      i = header.indexOf(";", i);
    } else {
      const end = header.indexOf(";", i);
      value = (end < 0 ? header.slice(i) : header.slice(i, end)).trim();
      i = end;
    }
    out.push([key, value]);
  }
  return [head, ...out];
}

/** RFC 8187 `UTF-8''%e2%82%ac.csv` → "€.csv"; null when it is not that form. */
function extendedValue(value: string): string | null {
  const match = /^utf-8'[^']*'(.*)$/i.exec(value);
  if (!match) return null;
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    return null;
  }
}

function indexOf(haystack: Uint8Array, needle: Uint8Array, from = 0): number {
  const first = needle[0]!;
  for (let i = haystack.indexOf(first, from); i >= 0 && i + needle.length <= haystack.length; i = haystack.indexOf(first, i + 1)) {
    let j = 1;
    while (j < needle.length && haystack[i + j] === needle[j]) j++;
    if (j === needle.length) return i;
  }
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** The body's bytes as they come, with the unread rest of the last chunk kept in `buffer`. */
class Source {
  buffer: Uint8Array;
  private ended = false;

  constructor(
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    start: Uint8Array,
  ) {
    this.buffer = start;
  }

  /** Appends the next chunk to the buffer; false at the end of the body. */
  async more(): Promise<boolean> {
    if (this.ended) return false;
    const { done, value } = await this.reader.read();
    if (done) {
      this.ended = true;
      return false;
    }
    this.buffer = concat(this.buffer, value);
    return true;
  }

  cancel(): void {
    this.reader.cancel().catch(() => undefined);
  }
}

/**
 * The parts of a multipart body, in order. Throws `MultipartError` for a body that is not well-formed
 * multipart (a missing delimiter, headers past `maxHeaderBytes`, more than `maxParts` parts, a part
 * without a `form-data` name).
 */
export async function* multipartParts(
  body: ReadableStream<Uint8Array>,
  boundary: string,
  { maxHeaderBytes = 16 * 1024, maxParts = 16 }: MultipartOptions = {},
): AsyncGenerator<MultipartPart> {
  // "\r\n" in front: the first delimiter then looks like every other one.
  const source = new Source(body.getReader(), CRLF);
  const delimiter = encoder.encode(`\r\n--${boundary}`);
  try {
    // The preamble, up to the first delimiter, is ignored.
    let at = indexOf(source.buffer, delimiter);
    while (at < 0) {
      if (source.buffer.length > 64 * 1024) throw new MultipartError("no multipart boundary at the start of the body");
      if (!(await source.more())) throw new MultipartError("the body has no multipart boundary");
      at = indexOf(source.buffer, delimiter);
    }
    source.buffer = source.buffer.subarray(at + delimiter.length);
    for (let count = 0; ; count++) {
      // After a delimiter: "--" ends the body; otherwise optional white space, then CRLF and a part.
      while (source.buffer.length < 2) if (!(await source.more())) throw new MultipartError("the body ends inside a delimiter");
      if (source.buffer[0] === 0x2d && source.buffer[1] === 0x2d) return;
      let end = indexOf(source.buffer, CRLF);
      while (end < 0) {
        if (source.buffer.length > 1024 || !(await source.more())) throw new MultipartError("a delimiter line does not end");
        end = indexOf(source.buffer, CRLF);
      }
      if (!/^[ \t]*$/.test(decoder.decode(source.buffer.subarray(0, end)))) throw new MultipartError("a delimiter line is malformed");
      source.buffer = source.buffer.subarray(end + 2);
      if (count >= maxParts) throw new MultipartError(`more than ${maxParts} parts`);
      const headers = await readHeaders(source, maxHeaderBytes);
      const disposition = headers.get("content-disposition");
      const [kind, ...params] = splitParams(disposition ?? "");
      if (kind.toLowerCase() !== "form-data") throw new MultipartError("a part has no Content-Disposition: form-data");
      const param = (key: string) => params.find(([k]) => k === key)?.[1];
      const name = param("name");
      if (name === undefined) throw new MultipartError("a part has no name");
      const extended = param("filename*");
      const filename = (extended !== undefined ? extendedValue(extended) : null) ?? param("filename") ?? null;
      let finished = false;
      const finish = () => {
        finished = true;
      };
      yield { name, filename, contentType: headers.get("content-type") ?? null, body: partBytes(source, delimiter, finish) };
      // The caller skipped the part, or stopped inside it: read past it (the position is the source's).
      if (!finished) for await (const _ of partBytes(source, delimiter, finish));
    }
  } finally {
    source.cancel();
  }
}

async function readHeaders(source: Source, maxHeaderBytes: number): Promise<Map<string, string>> {
  // A part without headers starts with the empty line at once.
  let end = source.buffer[0] === 0x0d && source.buffer[1] === 0x0a ? -2 : indexOf(source.buffer, HEADER_END);
  while (end === -1) {
    if (source.buffer.length > maxHeaderBytes) throw new MultipartError(`a part's headers are longer than ${maxHeaderBytes} bytes`);
    if (!(await source.more())) throw new MultipartError("the body ends inside a part's headers");
    end = source.buffer[0] === 0x0d && source.buffer[1] === 0x0a ? -2 : indexOf(source.buffer, HEADER_END);
  }
  if (end > maxHeaderBytes) throw new MultipartError(`a part's headers are longer than ${maxHeaderBytes} bytes`);
  const headers = new Map<string, string>();
  if (end >= 0) {
    for (const line of decoder.decode(source.buffer.subarray(0, end)).split("\r\n")) {
      const colon = line.indexOf(":");
      if (colon <= 0) throw new MultipartError("a part's header line is malformed");
      headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
  }
  source.buffer = source.buffer.subarray(end + 4);
  return headers;
}

/** A part's bytes up to the next delimiter, which it consumes (`done` is called then). */
async function* partBytes(source: Source, delimiter: Uint8Array, done: () => void): AsyncGenerator<Uint8Array> {
  for (;;) {
    // The source moves past a chunk before it is handed out, so a reader that stops anywhere leaves it right.
    const at = indexOf(source.buffer, delimiter);
    if (at >= 0) {
      const chunk = source.buffer.subarray(0, at);
      source.buffer = source.buffer.subarray(at + delimiter.length);
      done();
      if (chunk.length) yield chunk;
      return;
    }
    // All but what could be the start of a delimiter split across chunks.
    const safe = source.buffer.length - (delimiter.length - 1);
    if (safe > 0) {
      const chunk = source.buffer.subarray(0, safe);
      source.buffer = source.buffer.subarray(safe);
      yield chunk;
    }
    if (!(await source.more())) throw new MultipartError("the body ends inside a part");
  }
}

/** A plain field's value as text, at most `maxBytes` of it (longer is a MultipartError). */
export async function fieldText(part: MultipartPart, maxBytes = 4096): Promise<string> {
  let bytes = new Uint8Array(0);
  for await (const chunk of part.body) {
    bytes = concat(bytes, chunk);
    if (bytes.length > maxBytes) throw new MultipartError(`the field ${part.name} is longer than ${maxBytes} bytes`);
  }
  return decoder.decode(bytes);
}
