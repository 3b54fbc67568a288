CREATE TABLE `code_uploads` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`content` text NOT NULL,
	`content_size` integer NOT NULL,
	`content_sha256` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `code_uploads_account_created_idx` ON `code_uploads` (`account_id`,`created_at`,`id`);