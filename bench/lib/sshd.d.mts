/** Types of sshd.mjs (a private OpenSSH server on 127.0.0.1; the SSH tests use it from TypeScript). */

/** A running private sshd. */
export interface PrivateSshd {
  /** Pid of the listening daemon. */
  pid: number;
  /** Its port on 127.0.0.1. */
  port: number;
  /** An ssh argv that runs `remote` on it non-interactively (no host key prompts, no agent). */
  ssh(...remote: string[]): string[];
  /** Ends the daemon and removes its directory; resolves once it is gone. */
  stop(): Promise<void>;
}

/** True when this machine can run the SSH path (sshd, ssh and ssh-keygen installed). */
export function sshAvailable(): boolean;

/** Starts a daemon; resolves once it accepts connections. */
export function startSshd(): Promise<PrivateSshd>;
