/**
 * Both ends of live output in one thread, over a real MessageChannel: the engine's publisher
 * (src/worker/output/live-output.ts) and the host's receiver (src/main/engine/live-output-receiver.ts). Flow control
 * (pause, drop, resume, the gap report), a late resume answer, and the last batch at close. The same
 * code across real threads, with real shells, is in output-pipeline.test.ts.
 */
import { MessageChannel, type MessagePort, receiveMessageOnPort } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { LiveOutputReceiver } from '../../../../src/main/engine/live-output-receiver.js';
import { LIVE_HIGH_WATERMARK_BYTES, LiveRingReader } from '../../../../src/shared/live-ring.js';
import type { LiveOutputMessage, LiveOutputResume } from '../../../../src/shared/protocol.js';
import type { OutputChunk } from '../../../../src/shared/types.js';
import { LiveOutputPublisher } from '../../../../src/worker/output/live-output.js';
import { until } from '../../../support/until.js';

/** 40 lines of 98 characters and CRLF: 4000 characters, 3960 as subscribers count them. */
const BLOCK = `${'x'.repeat(98)}\r\n`.repeat(40);
const BLOCK_CHARS = 40 * 99;

let ports: MessagePort[] = [];
afterEach(() => {
  for (const port of ports) port.close();
  ports = [];
});

/** A publisher, enabled, and the host's end of its ring read by hand. */
function publisherWithRing(): {
  publisher: LiveOutputPublisher;
  reader: LiveRingReader;
  host: MessagePort;
  /** The ring's "resume wanted" flag (its fourth control slot, after the records). */
  resumeWanted: { get(): number; clear(): void };
} {
  const channel = new MessageChannel();
  ports.push(channel.port1, channel.port2);
  const publisher = new LiveOutputPublisher(channel.port1);
  publisher.setEnabled(true);
  const first = receiveMessageOnPort(channel.port2)?.message as LiveOutputMessage;
  if (first?.type !== 'ring') throw new Error('the ring comes first');
  const control = new Int32Array(first.buffer, first.buffer.byteLength - 16, 4);
  return {
    publisher,
    reader: new LiveRingReader(first.buffer),
    host: channel.port2,
    resumeWanted: { get: () => Atomics.load(control, 3), clear: () => Atomics.store(control, 3, 0) },
  };
}

/** Characters delivered and dropped by one read of the whole ring. */
function readAll(reader: LiveRingReader): { delivered: number; dropped: number } {
  const counts = { delivered: 0, dropped: 0 };
  reader.drain((text, dropped) => {
    counts.delivered += text.length;
    counts.dropped += dropped;
  });
  return counts;
}

const resume: LiveOutputResume = { type: 'resume' };

describe('live output publisher', () => {
  it('drops (and counts) what a host that does not read has no room for, and reports the gap on resume', async () => {
    const { publisher, reader, host } = publisherWithRing();
    const blocks = Math.ceil((1.5 * LIVE_HIGH_WATERMARK_BYTES) / BLOCK.length);
    for (let i = 0; i < blocks; i++) publisher.textBlock(BLOCK, true);
    const first = readAll(reader);
    // Paused at the high watermark: what was written arrives, the rest is not there, and not yet counted.
    expect(first.delivered).toBeGreaterThanOrEqual(LIVE_HIGH_WATERMARK_BYTES * 0.95);
    expect(first.delivered).toBeLessThan(blocks * BLOCK_CHARS);
    expect(first.dropped).toBe(0);
    // The host has read it all: it tells the paused engine, which reports the gap at once.
    expect(reader.claimResume()).toBe(true);
    host.postMessage(resume);
    let later = { delivered: 0, dropped: 0 };
    await until('the gap report', () => {
      later = readAll(reader);
      return later.dropped > 0;
    });
    expect(later.delivered).toBe(0);
    expect(first.delivered + later.dropped).toBe(blocks * BLOCK_CHARS);
    publisher.dispose();
  });

  it('asks again when a resume answers an earlier request (the engine paused anew since)', async () => {
    const { publisher, reader, host, resumeWanted } = publisherWithRing();
    const blocks = Math.ceil((1.5 * LIVE_HIGH_WATERMARK_BYTES) / BLOCK.length);
    for (let i = 0; i < blocks; i++) publisher.textBlock(BLOCK, true);
    // The race: the host took the request (cleared its flag) for an earlier pause, and its answer
    // arrives while more than the low watermark is unread.
    expect(resumeWanted.get()).toBe(1);
    resumeWanted.clear();
    host.postMessage(resume);
    await until('the engine to ask again', () => resumeWanted.get() === 1);
    // So when the host does read down, it answers this pause too, and the gap is reported.
    readAll(reader);
    expect(reader.claimResume()).toBe(true);
    host.postMessage(resume);
    await until('the gap report', () => readAll(reader).dropped > 0);
    publisher.dispose();
  });

  it('publishes its last batch when disposed, CRLF turned into LF', () => {
    const { publisher, reader } = publisherWithRing();
    publisher.textBlock('one\r\ntwo\r\n', true);
    publisher.text('thr');
    publisher.text('ée');
    publisher.newline();
    publisher.dispose();
    const texts: string[] = [];
    reader.drain((text) => texts.push(text));
    expect(texts).toEqual(['one\ntwo\nthrée\n']);
  });
});

describe('live output receiver', () => {
  it('delivers as woken, and reads what is left when disposed (the last batch of a closing session)', async () => {
    const channel = new MessageChannel();
    ports.push(channel.port1, channel.port2);
    const publisher = new LiveOutputPublisher(channel.port1);
    const chunks: OutputChunk[] = [];
    const receiver = new LiveOutputReceiver(channel.port2, () => (chunk) => chunks.push(chunk));
    publisher.setEnabled(true);
    publisher.textBlock('a\r\nb\r\n', true);
    await until('the first batch', () => chunks.length === 1);
    expect(chunks[0]).toEqual({ text: 'a\nb\n', dropped: 0 });
    // Written as the session closes; the host is awake (its read timer is armed), so no wake-up comes.
    publisher.textBlock('last\r\n', true);
    publisher.dispose();
    receiver.dispose();
    expect(chunks.map((chunk) => chunk.text)).toEqual(['a\nb\n', 'last\n']);
  });
});
