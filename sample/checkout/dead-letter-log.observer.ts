import { Injectable, Logger } from '@nestjs/common';
import { OnJobTransition, type TransitionEvent } from '../../lib/index.js';

/**
 * Posts every dead-lettered job to the log: where a real app would page someone or open a ticket.
 * Delivery is at least once, so a real sink would dedupe on `event.eventId`.
 */
@Injectable()
export class DeadLetterLogObserver {
  private readonly logger = new Logger('DeadLetters');

  @OnJobTransition({ to: ['dead_lettered'] })
  report(event: TransitionEvent): void {
    const reason = event.error?.split('\n')[0] ?? 'no error recorded';
    this.logger.warn(`DEAD LETTER ${event.name} ${event.jobId} after attempt ${event.attempt}: ${reason} (event ${event.eventId})`);
  }
}
