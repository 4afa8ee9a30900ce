/**
 * The byte movers of replication: one {@linkcode Transport} interface, implemented over
 * a Unix socket and over WebSocket. Only these files touch sockets.
 *
 * @module
 */
export {
  type Connector,
  type SendOptions,
  type Transport,
  TransportClosedError,
  type TransportHandler,
  type TransportServer,
} from "./transport.ts";
export {
  connectUnix,
  listenUnix,
  type ListenUnixOptions,
  UnixSocketTransport,
  type UnixTransportOptions,
} from "./unix_socket.ts";
export {
  connectWebSocket,
  type ConnectWebSocketOptions,
  listenWebSocket,
  type ListenWebSocketOptions,
  WEBSOCKET_MAX_PAYLOAD,
  WebSocketTransport,
} from "./websocket.ts";
