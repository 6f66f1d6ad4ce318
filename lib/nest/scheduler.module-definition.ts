import { ConfigurableModuleBuilder, type DynamicModule, type InjectionToken } from '@nestjs/common';
import type { SchedulerModuleExtras, SchedulerModuleOptions } from './interfaces/scheduler-module-options.interface.js';
import { workerOptionsProvider } from './scheduler-options.check.js';
import { schedulerStoreProvider } from './scheduler-store.provider.js';

export const {
  ConfigurableModuleClass: SchedulerConfigurableModule,
  MODULE_OPTIONS_TOKEN: SCHEDULER_MODULE_OPTIONS,
  OPTIONS_TYPE: SCHEDULER_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: SCHEDULER_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<SchedulerModuleOptions>({ moduleName: 'DurableScheduler' })
  .setClassMethodName('forRoot')
  .setExtras<SchedulerModuleExtras>({ isGlobal: false, dataSourceName: undefined }, (definition, extras): DynamicModule => ({
    ...definition,
    global: extras.isGlobal,
    // The DataSource token depends on its name, so the store's provider is built here, where the name is known.
    providers: [
      ...(definition.providers ?? []),
      workerOptionsProvider(SCHEDULER_MODULE_OPTIONS as InjectionToken),
      schedulerStoreProvider(extras.dataSourceName, SCHEDULER_MODULE_OPTIONS as InjectionToken),
    ],
  }))
  .build();
