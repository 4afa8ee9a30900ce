/**
 * A group of HTTP routes an area serves (files, snapshots, metrics, the UI, MCP…), made
 * with the web framework inside that area and mounted together by the REST application.
 * Only its `fetch` is public: the areas' signatures never name the framework's types.
 */
export interface Routes {
  /** Answers one request. */
  fetch(request: Request): Response | Promise<Response>;
  /** Answers a request made in this process (a path is taken as `http://localhost/PATH`). */
  request(input: string | Request | URL, init?: RequestInit): Response | Promise<Response>;
}
