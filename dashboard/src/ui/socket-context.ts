import { createContext } from 'preact';
import type { VenueSocket } from '../api/socket';

/** The viewer's socket (one per token and viewed wallet), provided by the app shell. */
export const SocketContext = createContext<VenueSocket | null>(null);
