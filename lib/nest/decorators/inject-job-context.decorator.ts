import { Inject } from '@nestjs/common';
import { JOB_CONTEXT } from '../scheduler.tokens.js';

/** Injects the current attempt's JobContext. The injecting provider becomes scoped to the attempt. */
export const InjectJobContext = (): PropertyDecorator & ParameterDecorator => Inject(JOB_CONTEXT);
