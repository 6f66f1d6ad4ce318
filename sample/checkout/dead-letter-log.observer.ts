import { Injectable, Logger } from '@nestjs/common';
import { OnJobTransition, visibleText, type TransitionEvent } from '../../lib/index.js';

/**
 * Posts every dead-lettered job to the log: where a real app would page someone or open a ticket.
 * Delivery is at least once, so a real sink would dedupe on `event.eventId`.
 */
@Injectable()
export class DeadLetterLogObserver {
  private readonly logger = new Logger('DeadLetters');

  @OnJobTransition({ to: ['dead_lettered'] })
  report(event: TransitionEvent): void {
    // The error is the handler's text: one escaped line of at most 200 characters, like the library's own log lines.
    const reason = visibleText(event.error?.split('\n')[0] ?? 'no error recorded', { maxLength: 200 });
    this.logger.warn(`DEAD LETTER ${event.name} ${event.jobId} after attempt ${event.attempt}: ${reason} (event ${event.eventId})`);
  }
}
