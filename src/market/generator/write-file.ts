import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import yazl from 'yazl';

/**
 * Writes one kline CSV as Binance publishes it: `NAME.zip` holding `NAME.csv`, and `NAME.zip.CHECKSUM` with the
 * zip's SHA-256 in `sha256sum` format (`<hex>  NAME.zip`). The zip's entry time is fixed (`mtime`), so the same
 * CSV always gives the same bytes. Both files appear at once: they are written under temporary names and renamed,
 * the checksum last, so a file with its checksum beside it is complete (an interrupted run leaves no half file).
 * Resolves to the zip's size in bytes.
 */
export const writeZippedCsv = async (
  zipPath: string,
  csv: Buffer,
  mtime: Date,
  compressionLevel = 6,
): Promise<number> => {
  fs.mkdirSync(path.dirname(zipPath), { recursive: true });
  const base = path.basename(zipPath);
  const zip = new yazl.ZipFile();
  zip.addBuffer(csv, base.replace(/\.zip$/i, '.csv'), { mtime, mode: 0o100644, compressionLevel });
  zip.end();
  const temporary = `${zipPath}.${process.pid}.partial`;
  const hash = createHash('sha256');
  let size = 0;
  await new Promise<void>((resolve, reject) => {
    const out = fs.createWriteStream(temporary);
    zip.outputStream.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      size += chunk.length;
    });
    zip.outputStream.on('error', reject);
    out.on('error', reject);
    out.on('finish', resolve);
    zip.outputStream.pipe(out);
  });
  fs.renameSync(temporary, zipPath);
  const checksum = `${zipPath}.CHECKSUM`;
  fs.writeFileSync(`${checksum}.${process.pid}.partial`, `${hash.digest('hex')}  ${base}\n`);
  fs.renameSync(`${checksum}.${process.pid}.partial`, checksum);
  return size;
};
