import type { InstallStep } from '@ccos/shared/domain';
import type { StepHandler } from './step-handler';
import { ApplyIgnitionStep } from './steps/apply-ignition.step';
import { DownloadBinariesStep } from './steps/download-binaries.step';
import { InstallPackagesStep } from './steps/install-packages.step';
import { InstallServicesStep } from './steps/install-services.step';
import { PreflightStep } from './steps/preflight.step';
import { StartKubeletStep } from './steps/start-kubelet.step';

export type StepRegistry = Readonly<Record<InstallStep, StepHandler>>;

/** Steps as data: the one place that says which handler runs a step. */
export function defaultStepRegistry(): StepRegistry {
  return {
    PREFLIGHT: new PreflightStep(),
    DOWNLOAD_BINARIES: new DownloadBinariesStep(),
    INSTALL_PACKAGES: new InstallPackagesStep(),
    INSTALL_SERVICES: new InstallServicesStep(),
    APPLY_IGNITION: new ApplyIgnitionStep(),
    START_KUBELET: new StartKubeletStep(),
  };
}
