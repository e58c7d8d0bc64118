// A real SMTP server in the test process, on loopback (smtp-server), and every mail it took parsed by
// mailparser: what a mailbox would hold. `refuse` makes it answer the next mails' data with a 451.
import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  envelopeTo: string[];
  parsed: ParsedMail;
  raw: string;
}

export async function smtpReceiver() {
  const received: ReceivedMail[] = [];
  const state = { refuse: 0, refused: 0 };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (state.refuse > 0) {
          state.refuse -= 1;
          state.refused += 1;
          const error = Object.assign(new Error('try again later'), { responseCode: 451 });
          callback(error);
          return;
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        simpleParser(raw).then(
          (parsed) => {
            received.push({ envelopeTo: session.envelope.rcptTo.map((to) => to.address), parsed, raw });
            callback();
          },
          (error: Error) => callback(error),
        );
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    state,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
