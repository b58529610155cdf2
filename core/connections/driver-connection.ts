/** What a driver knows of a connection. Credentials are the driver's own (decrypted) settings. */
export interface DriverConnection {
  id: string;
  workspaceId: string;
  credentials: Record<string, string>;
  /** The connection's own number, once known. */
  phoneNumber: string | null;
}
