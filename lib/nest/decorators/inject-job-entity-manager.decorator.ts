import { Inject } from '@nestjs/common';
import { JOB_ENTITY_MANAGER } from '../scheduler.tokens.js';

/**
 * Injects an EntityManager bound to the current attempt's transaction. Writes made through it
 * commit together with the job's success outcome and roll back if the attempt fails or its lease
 * was lost. The transaction opens on first use, so injecting it costs nothing by itself.
 */
export const InjectJobEntityManager = (): PropertyDecorator & ParameterDecorator => Inject(JOB_ENTITY_MANAGER);
