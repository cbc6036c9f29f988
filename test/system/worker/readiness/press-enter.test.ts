// `text: ""` presses Enter (SPEC §4.2, §7): it is input with a write boundary like any other and
// settles once the program has taken it — an empty answer to bash's `read`, an empty passphrase to
// ssh-keygen (twice), nano's file-name prompt. Only a send with neither `text` nor `keys` waits; one
// that gives them but would write nothing (`text: ""` with `submit: false`, `keys: []`) is refused.
// The same real programs through the engine, a remote engine (`serve --stdio`) and the MCP server on
// a real host (which runs the tools), so every path that carries a send carries this one.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Host } from '../../../../dist/main/harness/host.js';
import { createLocalHost } from '../../../../dist/main/harness/local-host.js';
import { createTerminalMcpServer } from '../../../../dist/main/mcp/terminal-mcp-server.js';
import { createRemoteEngine, type PtyEngine, type SendRequest, testEngine } from '../../../support/engine.js';

const BIN = new URL('../../../../dist/main/cli/bin.js', import.meta.url).pathname;
const SERVE = [process.execPath, BIN, 'serve', '--stdio'];
const NOTHING_TO_WRITE = 'nothing to write: omit text and keys to wait';

/** What a scenario needs of a settled send, whichever path carried it. */
interface Settled {
  output: string;
  waitReason: string;
  exitCode?: number;
  screen?: { lines: string[] };
}

/** One send through the path under test. */
type Send = (request: Omit<SendRequest, 'signal'>) => Promise<Settled>;

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'press-enter-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const lines = (text: string) => text.split('\n');

/** bash's `read` gets an empty line; the next send runs in the shell, not as the read's answer. */
async function emptyAnswerToRead(send: Send): Promise<void> {
  const asked = await send({ text: 'read -p "Continue? " x' });
  expect(asked.waitReason).toBe('stdin_read');
  expect(asked.exitCode).toBeUndefined(); // the read waits; the shell's prompt has not come back
  const answered = await send({ text: '' });
  expect(answered).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
  const shown = await send({ text: 'echo "x=[$x]-$((6*7))"' });
  expect(shown).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
  expect(lines(shown.output)).toContain('x=[]-42');
}

/** ssh-keygen's two passphrase prompts answered empty: the key exists and the shell takes the next send. */
async function emptyPassphrases(send: Send): Promise<void> {
  const key = join(dir, 'k');
  const asked = await send({ text: `ssh-keygen -t ed25519 -C press-enter -f ${key}` });
  expect(asked.waitReason).toBe('stdin_read');
  expect(asked.exitCode).toBeUndefined();
  const again = await send({ text: '' });
  expect(again.waitReason).toBe('stdin_read');
  expect(again.exitCode).toBeUndefined(); // the second prompt ("same passphrase again")
  const made = await send({ text: '' });
  expect(made).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
  expect(existsSync(key)).toBe(true);
  // `256 SHA256:… press-enter (ED25519)` on the host; ssh-keygen printed `SHA256:… press-enter`.
  const listed = execFileSync('ssh-keygen', ['-lf', `${key}.pub`], { encoding: 'utf8' }).split(' ');
  expect(lines(made.output)).toContain(`${listed[1]} press-enter`);
  const next = await send({ text: 'echo next-$((6*7))' });
  expect(next).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
  expect(lines(next.output)).toContain('next-42');
}

/** nano: type, C-o, Enter on the file-name prompt, C-x: the file holds what was typed. */
async function nanoFileNamePrompt(send: Send): Promise<void> {
  const file = join(dir, 'note.txt');
  const opened = await send({ text: `nano --ignorercfiles ${file}` });
  expect(opened.screen).toBeDefined();
  await send({ keys: [{ text: 'written by nano' }] });
  const prompt = await send({ keys: ['C-o'] });
  expect(prompt.screen?.lines.join('\n')).toMatch(/File Name to Write/);
  const wrote = await send({ text: '' });
  expect(wrote.waitReason).toBe('stdin_read');
  expect(wrote.screen?.lines.join('\n')).toMatch(/\[ Wrote 1 line \]/);
  const left = await send({ keys: ['C-x'] });
  expect(left).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
  expect(left.screen).toBeUndefined();
  expect(readFileSync(file, 'utf8')).toBe('written by nano\n');
}

/** The engine API's result as a {@link Settled}. */
function engineSend(session: { startSend(request: SendRequest): { done: Promise<unknown> } }): Send {
  return async (request) => {
    const result = (await session.startSend(request).done) as Settled & { viewport: string };
    return { ...result, output: result.viewport };
  };
}

describe('text "" presses Enter: the engine', () => {
  it('answers bash read with an empty line', async () => {
    const session = await (await testEngine()).spawn({ cwd: dir });
    await emptyAnswerToRead(engineSend(session));
  });

  it("answers ssh-keygen's passphrase prompts with an empty passphrase", async () => {
    const session = await (await testEngine()).spawn({ cwd: dir });
    await emptyPassphrases(engineSend(session));
  });

  it("accepts nano's file-name prompt", async () => {
    const session = await (await testEngine()).spawn({ cwd: dir });
    await nanoFileNamePrompt(engineSend(session));
  });

  it("at the shell's own prompt Enter gives a new prompt, with the status bash keeps for an empty line", async () => {
    const session = await (await testEngine()).spawn({ cwd: dir });
    expect((await session.startSend({ text: '(exit 3)' }).done).exitCode).toBe(3);
    // A wait-only send would settle on the prompt already reported, with no exit code.
    const entered = await session.startSend({ text: '' }).done;
    expect(entered).toMatchObject({ waitReason: 'stdin_read', exitCode: 3 });
    const next = await session.startSend({ text: 'echo after-$((6*7))' }).done;
    expect(next).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
    expect(lines(next.viewport)).toContain('after-42');
  });

  it('refuses text "" with submit false and keys [] before anything is written; a send without either waits', async () => {
    const session = await (await testEngine()).spawn({ cwd: dir });
    const asked = await session.startSend({ text: 'read -p "Continue? " x' }).done;
    expect(asked.waitReason).toBe('stdin_read');
    for (const request of [{ text: '', submit: false }, { keys: [] }, { keys: [{ text: '' }] }]) {
      await expect(session.startSend(request).done).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: NOTHING_TO_WRITE,
      });
    }
    const waited = await session.startSend({}).done;
    expect(waited.waitReason).toBe('stdin_read');
    expect(waited.exitCode).toBeUndefined(); // still in the read: nothing reached it
    const answered = await session.startSend({ text: '' }).done;
    expect(answered).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
  });
});

describe('text "" presses Enter: a remote engine (serve --stdio)', () => {
  let engine: PtyEngine | undefined;

  afterEach(async () => {
    await engine?.close();
    engine = undefined;
  });

  it('answers bash read and ssh-keygen with empty lines across the world protocol', async () => {
    engine = await createRemoteEngine({ command: SERVE });
    const session = await engine.spawn({ cwd: dir });
    await emptyAnswerToRead(engineSend(session));
    await emptyPassphrases(engineSend(session));
    await expect(session.startSend({ keys: [] }).done).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: NOTHING_TO_WRITE,
    });
  });
});

describe('text "" presses Enter: terminal_send over MCP on a real host', () => {
  let host: Host;
  let client: Client;
  let closeServer: () => Promise<void>;

  beforeEach(async () => {
    host = await createLocalHost({ mode: 'workspace-write', workspaceRoot: dir });
    const server = createTerminalMcpServer({ pty: host.service('pty'), owner: 'conn' });
    client = new Client({ name: 'press-enter', version: '1.0.0' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    await client.listTools(); // the client validates structuredContent only for tools it has listed
    closeServer = () => server.close();
  });

  afterEach(async () => {
    await client.close();
    await closeServer();
    await host.dispose();
  });

  const textOf = (result: Awaited<ReturnType<Client['callTool']>>) =>
    (result.content as Array<{ type: string; text: string }>).map((part) => part.text).join('');

  async function toolSend(): Promise<Send> {
    const opened = await client.callTool({ name: 'terminal_open', arguments: {} });
    const { sessionId } = opened.structuredContent as { sessionId: string };
    return async (request) => {
      const result = await client.callTool({ name: 'terminal_send', arguments: { sessionId, ...request } });
      if (result.isError) throw new Error(`terminal_send: ${textOf(result)}`);
      return result.structuredContent as unknown as Settled;
    };
  }

  it('answers bash read with an empty line', async () => {
    await emptyAnswerToRead(await toolSend());
  });

  it("answers ssh-keygen's passphrase prompts with an empty passphrase", async () => {
    await emptyPassphrases(await toolSend());
  });

  it("accepts nano's file-name prompt", async () => {
    await nanoFileNamePrompt(await toolSend());
  });

  it('refuses text "" with submit false and keys [] with a message that says how to wait', async () => {
    await client.callTool({ name: 'terminal_open', arguments: {} });
    for (const request of [{ text: '', submit: false }, { keys: [] }]) {
      const refused = await client.callTool({
        name: 'terminal_send',
        arguments: { sessionId: 'shell-1', ...request },
      });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toBe(`${NOTHING_TO_WRITE}.`);
    }
  });
});
