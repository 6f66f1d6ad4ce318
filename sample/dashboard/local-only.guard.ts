import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/**
 * The sample's dashboard guard: it lets in requests from this machine only. A real app would check
 * its own session or token here, as it does for any admin page.
 */
@Injectable()
export class LocalOnlyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<IncomingMessage>();
    return LOOPBACK.has(request.socket.remoteAddress ?? '');
  }
}
