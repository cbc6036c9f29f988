/**
 * The SSH tests' private OpenSSH server on 127.0.0.1: the same helper the worlds benchmark uses
 * (bench/lib/sshd.mjs), so the two cannot drift apart.
 */
export {
  type PrivateSshd as TestSshd,
  startSshd as startTestSshd,
} from '../../bench/lib/sshd.mjs';
