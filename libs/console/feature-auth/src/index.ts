export { SignInPage } from './lib/sign-in.page';
export { ACCOUNT_ROUTES } from './lib/account.routes';
