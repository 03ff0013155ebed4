/**
 * `--watch-config`: reload when the config file's content changes, however
 * the file is replaced. Editors and config tools save by renaming a new file
 * over the old one, and Kubernetes updates a mounted ConfigMap by swapping
 * the `..data` symlink in the mount directory; a watch on the file itself
 * follows the old inode and hears nothing after the first such change.
 *
 * So the directory holding the path is watched (plus, when the path is a
 * symlink, the directory of the file it resolves to, re-resolved after each
 * change), events are debounced, and the file is read again and compared
 * with the content seen last: only a real change calls `onChange`. A file
 * that becomes unreadable counts as a change too, so the failed reload is
 * logged.
 */
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync, watch, type FSWatcher } from 'node:fs';
import { dirname, resolve } from 'node:path';

export interface ConfigWatcher {
  close(): void;
}

/** Content fingerprint; an unreadable file is its error code, so it differs from any content. */
function fingerprint(file: string): string {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex');
  } catch (err) {
    return `unreadable: ${(err as NodeJS.ErrnoException).code ?? 'error'}`;
  }
}

/** Watched directories: the path's own, and its resolved target's when it is a symlink. */
function directoriesOf(file: string): Set<string> {
  const dirs = new Set([dirname(file)]);
  try {
    dirs.add(dirname(realpathSync(file)));
  } catch {
    // Gone for now (mid-rename): the path's own directory still hears it come back.
  }
  return dirs;
}

export function watchConfigFile(path: string, onChange: () => void, debounceMs = 200): ConfigWatcher {
  const file = resolve(path);
  let last = fingerprint(file);
  const watchers = new Map<string, FSWatcher>();
  let pending: NodeJS.Timeout | undefined;
  let closed = false;

  const check = () => {
    if (closed) return;
    watchDirectories();
    const now = fingerprint(file);
    if (now === last) return;
    last = now;
    onChange();
  };
  // Tools write in several steps (temp file, rename, chmod): act once the directory is quiet.
  const onEvent = () => {
    clearTimeout(pending);
    pending = setTimeout(check, debounceMs);
    pending.unref();
  };
  const watchDirectories = () => {
    const wanted = directoriesOf(file);
    for (const [dir, watcher] of watchers) {
      if (wanted.has(dir)) continue;
      watcher.close();
      watchers.delete(dir);
    }
    for (const dir of wanted) {
      if (watchers.has(dir)) continue;
      try {
        const watcher = watch(dir, { persistent: false }, onEvent);
        watcher.on('error', () => {
          watcher.close();
          watchers.delete(dir);
        });
        watchers.set(dir, watcher);
      } catch {
        // A directory that cannot be watched now may be watchable after the next change.
      }
    }
  };
  watchDirectories();

  return {
    close() {
      closed = true;
      clearTimeout(pending);
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}
