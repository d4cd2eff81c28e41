export { type ApprovalExecutor, ApprovalService, type ApprovalServiceOptions, type Approver } from './lib/approval.service';
export { ApprovalResolver } from './lib/approval.resolver';
export { ApprovalRequestType } from './lib/approval.types';
