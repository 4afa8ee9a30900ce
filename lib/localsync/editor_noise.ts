/**
 * Files editors write beside the real ones (swap, backup, lock and probe files), which a
 * local-sync replica never records or sends: vim's `*.swp` and its `4913` write probe,
 * emacs' `*~`, `.#*` and `#*#`, macOS' `.DS_Store`, and git's folder. Gitignore lines:
 * emacs' auto-save pattern is escaped (`\#*#`), as a line starting with `#` is a comment.
 */
export const EDITOR_NOISE_PATTERNS: readonly string[] = [
  "*.swp",
  "*.swo",
  "*.swx",
  "*~",
  ".#*",
  "\\#*#",
  "4913",
  ".DS_Store",
  "*.tmp",
  ".git/",
];

/** Local-sync's debounce when none is configured: editors save in bursts. */
export const LOCAL_SYNC_DEBOUNCE_MS = 300;
