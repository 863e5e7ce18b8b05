import type { Clock } from '@countersign/shared'
import type { PendingRequest } from '../requests/pendingRequests.js'
import type { ApprovalChannel } from './channel.js'
import { pendingView } from './pendingView.js'

/** An authenticated dashboard connection (a `ws` WebSocket). */
export interface FeedSocket {
  send(data: string): void
  readonly readyState: number
  /** Bytes queued and not yet handed to the network. */
  readonly bufferedAmount: number
  terminate(): void
}

/**
 * A feed socket with more than this queued is dropped: a reader that stopped
 * reading (a laptop asleep with its connection still up) must not fill the
 * approver's memory while requests and audit events keep coming. The
 * dashboard reconnects and starts again from a fresh snapshot.
 */
export const MAX_FEED_BACKLOG_BYTES = 4 * 1024 * 1024

export interface WebChannel extends ApprovalChannel {
  /** Adds an authenticated socket to the live feed; returns its removal. */
  subscribe(socket: FeedSocket): () => void
  /** Sends to every authenticated socket. */
  broadcast(message: unknown): void
  readonly subscribers: number
}

/**
 * The dashboard: requests are decided over HTTP (decide, with the operator
 * token). This channel pushes each new request and each end to the
 * authenticated WebSocket feed, one message per change, so a flood of
 * requests does not resend the whole list each time.
 */
export function webChannel(clock: Clock): WebChannel {
  const sockets = new Set<FeedSocket>()
  const broadcast = (message: unknown) => {
    if (sockets.size === 0) return
    const text = JSON.stringify(message)
    for (const s of sockets) {
      if (s.readyState !== 1) continue
      if (s.bufferedAmount > MAX_FEED_BACKLOG_BYTES) {
        sockets.delete(s)
        s.terminate()
        continue
      }
      s.send(text)
    }
  }
  // The card is rendered only when a dashboard is connected to receive it.
  const announce = (request: PendingRequest) => {
    if (sockets.size > 0) broadcast({ type: 'request', request: pendingView(request, clock()) })
  }
  return {
    name: 'web',
    present: announce,
    withdraw(requestId, end) {
      broadcast({ type: 'ended', requestId, end })
    },
    // A quorum vote: the same message as a new request, with the new votes; views replace their card by requestId.
    update: announce,
    subscribe(socket) {
      sockets.add(socket)
      return () => sockets.delete(socket)
    },
    broadcast,
    get subscribers() {
      return sockets.size
    },
  }
}
