/**
 * An append-only text buffer that keeps only the last `maxBytes` bytes (UTF-8) of what
 * was written, so recording a long terminal command never grows without bound.
 */

export class BoundedText {
  private chunks: string[] = [];
  private chunkBytes: number[] = [];
  private totalBytes = 0;
  private droppedBytes = 0;

  constructor(private readonly maxBytes: number) {
    if (!Number.isFinite(maxBytes) || maxBytes <= 0) {
      throw new RangeError(`maxBytes must be a positive number, got ${String(maxBytes)}`);
    }
  }

  /** Appends a chunk, dropping the oldest text when over the limit. */
  append(chunk: string): void {
    if (chunk.length === 0) {
      return;
    }
    const bytes = Buffer.byteLength(chunk, "utf8");
    this.chunks.push(chunk);
    this.chunkBytes.push(bytes);
    this.totalBytes += bytes;
    this.trim();
  }

  /** True when older output had to be dropped. */
  get truncated(): boolean {
    return this.droppedBytes > 0;
  }

  get byteLength(): number {
    return this.totalBytes;
  }

  /**
   * The kept text. When text was dropped, the first (partial) line is removed too:
   * half a log line would only confuse the diagnosis.
   */
  text(): string {
    const joined = this.chunks.join("");
    if (!this.truncated) {
      return joined;
    }
    const firstNewline = joined.indexOf("\n");
    return firstNewline === -1 ? joined : joined.slice(firstNewline + 1);
  }

  private trim(): void {
    while (this.totalBytes > this.maxBytes && this.chunks.length > 0) {
      const excess = this.totalBytes - this.maxBytes;
      const firstBytes = this.chunkBytes[0] ?? 0;
      if (firstBytes <= excess) {
        this.chunks.shift();
        this.chunkBytes.shift();
        this.totalBytes -= firstBytes;
        this.droppedBytes += firstBytes;
        continue;
      }
      const bytes = Buffer.from(this.chunks[0] ?? "", "utf8");
      let start = excess;
      // Never start inside a multi-byte character: skip UTF-8 continuation bytes.
      while (start < bytes.length && ((bytes[start] ?? 0) & 0xc0) === 0x80) {
        start++;
      }
      const kept = bytes.subarray(start).toString("utf8");
      const keptBytes = Buffer.byteLength(kept, "utf8");
      this.chunks[0] = kept;
      this.chunkBytes[0] = keptBytes;
      this.totalBytes -= firstBytes - keptBytes;
      this.droppedBytes += firstBytes - keptBytes;
    }
  }
}
