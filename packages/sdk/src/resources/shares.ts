import { download, type DownloadOptions, type DownloadResult } from '../download.js';
import { type RequestOptions, segment, type Transport } from '../transport.js';
import type { SharedFile } from '../types.js';

/** Public share links: no account or token needed. */
export class SharesResource {
  constructor(private readonly transport: Transport) {}

  /** What a link shares. Takes the token or the whole share URL (whose server is then used). */
  get(tokenOrUrl: string, options?: RequestOptions): Promise<SharedFile> {
    const { transport, path } = this.locate(tokenOrUrl);
    return transport.json<SharedFile>({ method: 'GET', path, auth: false }, options);
  }

  download(tokenOrUrl: string, target: Omit<DownloadOptions, 'range'>, options?: RequestOptions): Promise<DownloadResult> {
    const { transport, path } = this.locate(tokenOrUrl);
    return download(transport, { path: `${path}?download=1`, auth: false }, target, options);
  }

  /** `https://host/base/share/<token>` is served by `https://host/base`, which may not be this client's server. */
  private locate(tokenOrUrl: string): { transport: Transport; path: string } {
    const match = /^(https?:\/\/.+?)\/(?:api\/)?share\/([^/?#]+)/.exec(tokenOrUrl.trim());
    const token = match ? decodeURIComponent(match[2]!) : tokenOrUrl.trim();
    const path = `/api/share/${segment(token)}`;
    if (!match || match[1] === this.transport.baseUrl) return { transport: this.transport, path };
    return { transport: this.transport.forServer(match[1]!), path };
  }
}
