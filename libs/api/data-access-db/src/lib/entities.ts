import { AuditLogEntity } from './entities/audit-log.entity';
import { ClusterEntity } from './entities/cluster.entity';
import { CsrDecisionEntity } from './entities/csr-decision.entity';
import { HostManifestEntity } from './entities/host-manifest.entity';
import { InstallDiagnosticsEntity } from './entities/install-diagnostics.entity';
import { InstallRunNoticeEntity } from './entities/install-run-notice.entity';
import { InstallRunEntity } from './entities/install-run.entity';
import { NodeBatchEntity } from './entities/node-batch.entity';
import { AutoscalingActivityEntity, NodeGroupEntity, NodeGroupMemberEntity } from './entities/node-group.entity';
import { NodeEntity } from './entities/node.entity';
import { RemovalEventEntity } from './entities/removal-event.entity';
import { RemovalRunEntity } from './entities/removal-run.entity';
import { RolloutEntity, RolloutNodeEntity } from './entities/rollout.entity';
import { ServiceCertificateAuthorityEntity } from './entities/service-certificate-authority.entity';
import { StepEventEntity } from './entities/step-event.entity';
import { UserSessionEntity } from './entities/user-session.entity';
import { UserEntity } from './entities/user.entity';

export const ENTITIES = [
  ClusterEntity, NodeEntity, InstallRunEntity, InstallDiagnosticsEntity, StepEventEntity, CsrDecisionEntity, AuditLogEntity, UserEntity, UserSessionEntity, RemovalRunEntity, RemovalEventEntity,
  ServiceCertificateAuthorityEntity,
  InstallRunNoticeEntity,
  NodeBatchEntity,
  NodeGroupEntity, NodeGroupMemberEntity, AutoscalingActivityEntity,
  HostManifestEntity,
  RolloutEntity, RolloutNodeEntity,
];
